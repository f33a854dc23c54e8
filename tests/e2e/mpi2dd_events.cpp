// MPI2DD end to end (issue 7): the real ompdbg on the reference starter mpi2dd-run and its
// rank program (examples/mpi2dd/). Ground truth is what the processes print about
// themselves ("MPI2DD-LOG rank=R ... world=W pid=P ppid=Q parent=PW:PR seq=S"), never
// ompdbg's own tables. One test per event kind, then the malformed interfaces.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <regex>
#include <set>

#include "mpi2dd_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi2dd;

TEST_CASE("mpi2dd: run -- mpi2dd-run acquires every rank at START, before it leaves its start-up",
          "[e2e][mpi2dd]") {
    auto r = ompdbg_job({"start", "mpi ranks", "continue"}, {starter(), "-np", "3", app()});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line_containing(r.out, "[MPI job: 3 ranks of " + app() + " acquired through MPI2DD from mpi2dd-run"));
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 3);
    // The table came while the ranks were held at their gate: no rank had printed yet.
    auto table_at = r.out.find("  Rank  Comm world");
    auto first_report = r.out.find("MPI2DD-LOG");
    REQUIRE(table_at != std::string::npos);
    CHECK(table_at < first_report);
    auto listed = rows(r.out.substr(0, first_report));
    REQUIRE(listed.size() == 3);
    for (auto& p : printed) {
        REQUIRE(listed.count(p.pid));
        auto& row = listed[p.pid];
        CHECK(row.rank == p.rank);
        CHECK(row.world_rank == p.rank);
        CHECK(row.world == p.world);
        CHECK(row.state == "stopped");
        CHECK(row.spawned_by == "-");
        CHECK(has_line(r.out, "[rank " + std::to_string(p.rank) + "] process " + std::to_string(p.pid) +
                                  " exited with code 00"));
    }
    CHECK(has_line(r.out, "[mpi2dd-run exited with code 00]"));
    // The starter is a directory too: it raised DIRECTORY_CHANGED as each rank ended
    // (mpi2dd_json.cpp sees them), which says nothing the rank's own end did not.
    CHECK_FALSE(has_line_containing(r.out, "DIRECTORY_CHANGED"));
}

TEST_CASE("mpi2dd: a breakpoint set before run is hit in every rank, spawned ones included", "[e2e][mpi2dd]") {
    // 3 ranks and 2 spawned ones each call compute() once: five hits, then the job ends.
    auto r = ompdbg_job({"break compute", "start", "continue", "continue", "continue", "continue", "continue",
                         "continue", "mpi ranks"},
                        {starter(), "-np", "3", app(), "--spawn", "2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 5);
    std::string world0 = world0_of(printed);
    REQUIRE_FALSE(world0.empty());
    std::string world1;
    for (auto& p : printed) {
        if (p.world != world0) {
            world1 = p.world;
        }
    }
    REQUIRE_FALSE(world1.empty());
    // The spawn was announced with its parent as the spawned processes state it.
    CHECK(has_line(r.out, "[MPI2DD SPAWN: 2 new processes of " + world1 + " spawned by rank 0 of " + world0 +
                              " (spawn 0): rank 3-4]"));
    auto listed = rows(r.out);
    REQUIRE(listed.size() == 5);
    for (auto& p : printed) {
        REQUIRE(listed.count(p.pid));
        auto& row = listed[p.pid];
        CHECK(row.world == p.world);
        CHECK(row.world_rank == p.rank);
        CHECK(row.state == "exited(0)");
        if (p.world == world0) {
            CHECK(row.spawned_by == "-");
            CHECK(p.parent == "-:-1");
        } else {
            CHECK(p.parent == world0 + ":0");
            CHECK(row.spawned_by == p.parent + " (spawn " + std::to_string(p.seq) + ")");
        }
    }
    // Every process hit the breakpoint, each labelled with its session rank.
    std::regex hit(R"(^Breakpoint 1, compute \(rank=(\d+)\) at .*mpi2dd_app\.c:)");
    std::regex label(R"(^\[rank (\d+)\]$)");
    std::set<int> labelled;
    auto lines = lines_of(r.out);
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
        std::smatch m1, m2;
        if (std::regex_match(lines[i], m1, label) && std::regex_search(lines[i + 2], m2, hit)) {
            labelled.insert(std::stoi(m1[1]));
        }
    }
    CHECK(labelled == std::set<int>{0, 1, 2, 3, 4});
}

TEST_CASE("mpi2dd: ABORT stops every rank and shows the abort message", "[e2e][mpi2dd]") {
    auto r = ompdbg_job({"start", "continue", "mpi ranks", "rank 1", "bt"},
                        {starter(), "-np", "3", app(), "--abort"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    // Rank 1 printed before it aborted; the others may be stopped before they print.
    auto printed = reports(r.out);
    auto rank1 = std::find_if(printed.begin(), printed.end(), [](auto& p) { return p.rank == 1; });
    REQUIRE(rank1 != printed.end());
    CHECK(has_line(r.out, "[MPI2DD ABORT: MPI_Abort by rank 1 of " + rank1->world +
                              ": rank 1 found an inconsistent state]"));
    CHECK(has_line_containing(r.out, "[Every rank of the job is stopped (3 ranks)"));
    auto listed = rows(r.out);
    REQUIRE(listed.size() == 3);
    for (auto& [pid, row] : listed) {
        CHECK(row.state == "stopped");
    }
    for (auto& p : printed) {
        CHECK(listed.count(p.pid));
    }
    // Rank 1 is stopped inside the abort call it made.
    CHECK(has_line_containing(r.out, " in mpi2dd_abort (message="));
}

// Once an intermittent hang (a directory forked by the traced starter left in its first
// ptrace stop: libtracer's release of fork children gave up too early); see
// tests/unit/tracer/fork_release_tests.cpp.
TEST_CASE("mpi2dd: hierarchical mode finds every rank through the metadirectory's directories",
          "[e2e][mpi2dd]") {
    auto r = ompdbg_job({"start", "mpi ranks", "mpi directories", "continue", "mpi ranks"},
                        {starter(), "--dirs", "2", "-np", "4", app(), "--spawn", "1"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line_containing(r.out, "[MPI job: 4 ranks of " + app() +
                                         " acquired through MPI2DD from mpi2dd-run"));
    CHECK(has_line_containing(r.out, ", 2 directory processes]"));
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 5);
    // The directories listed are the parents the ranks name.
    std::set<int> parents;
    for (auto& p : printed) {
        if (p.parent == "-:-1") {
            parents.insert(p.ppid);
        }
    }
    CHECK(parents.size() == 2);
    std::regex dir_row(R"(^  (\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+\S+)");
    std::set<int> dirs;
    bool meta = false;
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, dir_row)) {
            if (m[2].str().find("METADIR") != std::string::npos) {
                meta = true;
                CHECK(m[4] == "2");   // lists the two directories
            } else if (m[2].str().rfind("DIR", 0) == 0) {
                dirs.insert(std::stoi(m[1]));
                CHECK(m[3] == "2");   // each holds two ranks
            }
        }
    }
    CHECK(meta);
    CHECK(dirs == parents);
    // The spawn made a new directory holding the spawned process, acquired with its parent
    // at the first event after the metadirectory listed it: its METADIRECTORY_CHANGED, or
    // an earlier DIRECTORY_CHANGED of a directory whose rank ended meanwhile (or SPAWN).
    std::string world1;
    for (auto& p : printed) {
        if (p.parent != "-:-1") {
            world1 = p.world;
            CHECK(p.parent == world0_of(printed) + ":0");
        }
    }
    REQUIRE_FALSE(world1.empty());
    std::regex acquired("^\\[MPI2DD (METADIRECTORY_CHANGED|DIRECTORY_CHANGED|SPAWN): 1 new process of " + world1 +
                        " spawned by rank 0 of " + world0_of(printed) + " \\(spawn 0\\): rank 4\\]$");
    auto out_lines = lines_of(r.out);
    CHECK(std::count_if(out_lines.begin(), out_lines.end(),
                        [&](const std::string& l) { return std::regex_match(l, acquired); }) == 1);
    // A directory's table that only shrank as its rank ended is no news for the user: no
    // line but those that acquire a process or a directory.
    for (auto& l : out_lines) {
        if (l.rfind("[MPI2DD ", 0) == 0) {
            CHECK((std::regex_match(l, acquired) ||
                   std::regex_match(l, std::regex(R"(^\[MPI2DD \S+ in process \d+: new directory process \d+\]$)"))));
        }
    }
    auto listed = rows(r.out);
    CHECK(listed.size() == 5);
    for (auto& p : printed) {
        CHECK(listed.count(p.pid));
    }
}

TEST_CASE("mpi2dd: ACCEPT and CONNECT attach the processes of the other job", "[e2e][mpi2dd]") {
    bool debugged_accepts = GENERATE(true, false);
    std::string port = "/tmp/ompdbg-mpi2dd-" + std::to_string(::getpid()) + (debugged_accepts ? "-a" : "-c");
    // The other job (not debugged) waits, each rank, until a debugger traces it.
    background_process other({starter(), "--job", "other", "-np", "2", app(),
                              debugged_accepts ? "--connect" : "--accept", port, "--wait-for-debugger"});
    std::vector<self_report> theirs;
    for (int i = 0; i < 2; ++i) {
        auto l = other.wait_for_line(std::regex("^MPI2DD-LOG rank="), std::chrono::seconds(60));
        REQUIRE(l);
        auto v = reports(*l);
        REQUIRE(v.size() == 1);
        theirs.push_back(v.front());
    }
    auto r = ompdbg_job({"start", "continue", "mpi ranks"},
                        {starter(), "--job", "mine", "-np", "2", app(), debugged_accepts ? "--accept" : "--connect",
                         port});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    std::string event = debugged_accepts ? "ACCEPT" : "CONNECT";
    CHECK(has_line(r.out, "[MPI2DD " + event + ": 2 new processes of other/world0: rank 2-3]"));
    auto listed = rows(r.out);
    for (auto& p : theirs) {
        REQUIRE(listed.count(p.pid));
        CHECK(listed[p.pid].world == "other/world0");
        CHECK(listed[p.pid].world_rank == p.rank);
    }
    auto end = other.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK(end->exit_code == 0);   // its ranks saw the debugger and went on
}

TEST_CASE("mpi2dd: JOIN attaches the processes of the joined job", "[e2e][mpi2dd]") {
    std::string port = "/tmp/ompdbg-mpi2dd-" + std::to_string(::getpid()) + "-j";
    // Two ranks each: a job whose only rank ends is over for the session before its starter
    // has joined (commands_mpi drops a single-rank job with its rank).
    background_process other({starter(), "--job", "other", "-np", "2", app(), "--join", port,
                              "--wait-for-debugger"});
    REQUIRE(other.wait_for_line(std::regex("^mpi2dd-run: listening on "), std::chrono::seconds(60)));
    auto r = ompdbg_job({"start", "continue", "mpi ranks"}, {starter(), "--job", "mine", "-np", "2", app(), "--join", port});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "[MPI2DD JOIN: 2 new processes of other/world0: rank 2-3]"));
    CHECK(other.wait_exit(std::chrono::seconds(60)));
}

TEST_CASE("mpi2dd: attach to a running starter acquires its job through MPI2DD", "[e2e][mpi2dd]") {
    background_process job({starter(), "-np", "2", app(), "--wait-for-debugger"});
    std::vector<self_report> printed;
    for (int i = 0; i < 2; ++i) {
        auto l = job.wait_for_line(std::regex("^MPI2DD-LOG rank="), std::chrono::seconds(60));
        REQUIRE(l);
        printed.push_back(reports(*l).at(0));
    }
    auto r = ompdbg_batch({"-ex", "attach " + std::to_string(job.pid()), "-ex", "mpi ranks", "-ex", "continue"},
                          run_options().timeout_after(std::chrono::seconds(120)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line_containing(r.out, "[MPI job: 2 ranks of " + app() + " acquired through MPI2DD from mpi2dd-run (pid " +
                                         std::to_string(job.pid()) + ")]"));
    auto listed = rows(r.out);
    REQUIRE(listed.size() == 2);
    for (auto& p : printed) {
        CHECK(listed.count(p.pid));
    }
}

TEST_CASE("mpi2dd: a starter with MPI2DD and MPIR is acquired through MPI2DD, and says so", "[e2e][mpi2dd]") {
    auto r = ompdbg_job({"start", "mpi ranks", "kill"}, {dir() + "/mpi2dd-run-mpir", "-np", "2", app()});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "[mpi2dd-run-mpir offers MPI2DD and MPIR: using MPI2DD]"));
    CHECK(has_line_containing(r.out, "acquired through MPI2DD from mpi2dd-run-mpir"));
}

TEST_CASE("mpi2dd: a rank that dies is reported and the others go on", "[e2e][mpi2dd]") {
    auto r = ompdbg_job({"start", "continue", "mpi ranks", "continue", "mpi ranks"},
                        {starter(), "-np", "2", app(), "--crash"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "Program received signal SIGSEGV, Segmentation fault."));
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 2);
    auto listed = rows(r.out);
    for (auto& p : printed) {
        REQUIRE(listed.count(p.pid));
        CHECK(listed[p.pid].state == (p.rank == 1 ? "SIGSEGV" : "exited(0)"));
    }
}

TEST_CASE("mpi2dd: malformed interfaces are one clear error, no crash, no hang", "[e2e][mpi2dd]") {
    struct bad {
        std::string kind;
        std::string message;
        std::vector<std::string> starter_args;
    };
    auto c = GENERATE(values<bad>({
        {"magic", "has a wrong magic (4d 50 49 33 7f; expected 'M' 'P' 'I' '2' 0x7f)", {}},
        {"version", "has version 7; ompdbg implements version 1.", {}},
        {"variant", "has variant 9; ompdbg implements variant 1.", {}},
        {"size-negative", "MPI2DD_info.proctable_size of process", {}},
        {"size-huge", "is implausible (2147483647 entries; at most 65536).", {}},
        {"table-unmapped", "is not in mapped memory.", {}},
        {"string-unmapped", "proctable entry 0 executable_name of process", {}},
        {"string-unterminated", "is not terminated", {}},
        {"dir-self", "directory_table of process", {}},
        {"dir-cycle", "MPI2DD directory tables list each other: ", {"--dirs", "2"}},
    }));
    std::vector<std::string> job{starter()};
    job.insert(job.end(), c.starter_args.begin(), c.starter_args.end());
    job.insert(job.end(), {"-np", "2", app()});
    auto r = ompdbg_job({"start", "mpi ranks"}, job, run_options().set_env("MPI2DD_RUN_CORRUPT", c.kind));
    INFO(c.kind << "\n" << r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.term_signal == 0);
    CHECK(has_line_containing(r.err, c.message));
    CHECK(has_line(r.err, "No MPI job is being debugged."));
    if (c.kind == "size-negative") {
        CHECK(has_line_containing(r.err, "is negative (-3)."));
    } else if (c.kind == "string-unmapped") {
        CHECK(has_line_containing(r.err, "points to unmapped memory"));
    } else if (c.kind == "dir-self") {
        CHECK(has_line_containing(r.err, "lists the process itself."));
    }
}

TEST_CASE("mpi2dd: a pid that does not exist or belongs to an unrelated process is refused", "[e2e][mpi2dd]") {
    bool missing = GENERATE(true, false);
    // This test process is unrelated to the starter and does not run mpi2dd_app.
    std::string kind = missing ? "pid-missing" : "pid=" + std::to_string(::getpid());
    auto r = ompdbg_job({"start", "mpi ranks", "kill"}, {starter(), "-np", "2", app()},
                        run_options().set_env("MPI2DD_RUN_CORRUPT", kind));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.term_signal == 0);
    if (missing) {
        CHECK(has_line_containing(r.err, "warning: MPI2DD: not attaching to rank 0 of "));
        CHECK(has_line_containing(r.err, "(pid 1073741808): process 1073741808 does not exist on host "));
    } else {
        CHECK(has_line_containing(r.err, "process " + std::to_string(::getpid()) + " ("));
        CHECK(has_line_containing(r.err, ") does not descend from the starter (pid "));
    }
    // The other rank is acquired under its own MPI rank.
    auto listed = rows(r.out);
    REQUIRE(listed.size() == 1);
    CHECK(listed.begin()->second.rank == 1);
    CHECK(listed.begin()->second.world_rank == 1);
}
