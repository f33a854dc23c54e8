// MPI2DD starters that fill MPI2DD_info at run time (issue 17, item 6): mpi2dd-late, a
// second starter written apart from mpi2dd-run, whose MPI2DD_info is all zero in the file
// (.bss) and filled in main, with the interface in the program (mpi2dd-late) and in a
// library it links (mpi2dd-late-lib: libmpi2dd_late.so). Only the symbols tell ompdbg it
// is a starter: it must set the debugger flags before the starter runs (so that the ranks
// are held at their gate) and read mpi_flags at START.

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "mpi2dd_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::mpi2dd;

TEST_CASE("mpi2dd: a starter that fills MPI2DD_info in main is acquired at START, ranks held, breakpoints hit",
          "[e2e][mpi2dd]") {
    for (const char* name : {"mpi2dd-late", "mpi2dd-late-lib"}) {
        INFO(name);
        std::string late = dir() + "/" + name;
        REQUIRE(std::filesystem::exists(late));
        // 3 ranks, each calls compute() once: three hits, then the job ends.
        auto r = ompdbg_job({"break compute", "start", "mpi ranks", "continue", "continue", "continue", "continue"},
                            {late, "-n", "3", app()});
        INFO(r.all());
        REQUIRE_FALSE(r.timed_out);
        CHECK(has_line_containing(r.out, "[MPI job: 3 ranks of " + app() + " acquired through MPI2DD from " +
                                             std::string(name) + " (pid "));
        auto printed = reports(r.out);
        REQUIRE(printed.size() == 3);
        // The table came while the ranks were held at their gate: none had printed yet,
        // which it could only be if the starter saw MPI2DD_FLAG_BEING_DEBUGGED in main.
        auto table_at = r.out.find("  Rank  Comm world");
        auto first_report = r.out.find("MPI2DD-LOG");
        REQUIRE(table_at != std::string::npos);
        CHECK(table_at < first_report);
        auto listed = rows(r.out.substr(0, first_report));
        REQUIRE(listed.size() == 3);
        for (auto& p : printed) {
            REQUIRE(listed.count(p.pid));
            CHECK(listed[p.pid].rank == p.rank);
            CHECK(listed[p.pid].world == "late/w0");
            CHECK(p.world == "late/w0");
            CHECK(listed[p.pid].state == "stopped");
            CHECK(has_line(r.out, "[rank " + std::to_string(p.rank) + "] process " + std::to_string(p.pid) +
                                      " exited with code 00"));
        }
        // Every rank hit the breakpoint, each labelled with its rank.
        std::regex hit(R"(^Breakpoint 1, compute \(rank=(\d+)\) at .*mpi2dd_app\.c:)");
        std::regex label(R"(^\[rank (\d+)\]$)");
        std::set<int> labelled;
        auto lines = lines_of(r.out);
        for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
            std::smatch m1, m2;
            if (std::regex_match(lines[i], m1, label) && std::regex_search(lines[i + 2], m2, hit)) {
                CHECK(m1[1] == m2[1]);
                labelled.insert(std::stoi(m1[1]));
            }
        }
        CHECK(labelled == std::set<int>{0, 1, 2});
        CHECK(has_line(r.out, "[" + std::string(name) + " exited with code 00]"));
    }
}

TEST_CASE("mpi2dd: a starter filling MPI2DD_info at run time, run without a debugger, runs its ranks freely",
          "[e2e][mpi2dd]") {
    // Ground truth for the test above: the flags it waits on come only from a debugger.
    auto r = run({dir() + "/mpi2dd-late", "-n", "2", app()}, run_options().timeout_after(std::chrono::seconds(60)));
    INFO(r.all());
    CHECK(r.ok());
    CHECK(reports(r.out).size() == 2);
}
