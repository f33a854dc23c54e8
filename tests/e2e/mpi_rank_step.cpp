// Per-rank breakpoints (`break LOC rank LIST`), ranks stepping together across the focus
// and a one-rank job's end (issue 6), with the real ompdbg on a real `mpirun` of the
// bootstrap Open MPI. Ground truth is what the ranks print about themselves ("rank R of N
// pid P") and the arguments they pass (compute(rank)), never our own tables.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "cli_common.hpp"
#include "mpi_job_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi;

namespace {

/// The rank of the last "[rank N]" label at or before lines[i], or -1 (the first output of
/// a command read from a pipe follows the prompt on its line).
int label_before(const std::vector<std::string>& lines, std::size_t i) {
    std::regex label(R"(^(?:\(ompdbg\) )*\[rank (\d+)\]$)");
    for (std::size_t j = i + 1; j-- > 0;) {
        std::smatch m;
        if (std::regex_match(lines[j], m, label)) {
            return std::stoi(m[1]);
        }
    }
    return -1;
}

/// `lines` without the prompts that commands read from a pipe put in front of whatever is
/// printed next (a command's output or the program's).
std::vector<std::string> without_prompts(const std::vector<std::string>& lines) {
    std::vector<std::string> out;
    for (auto l : lines) {
        while (l.rfind("(ompdbg) ", 0) == 0) {
            l = l.substr(9);
        }
        out.push_back(l);
    }
    return out;
}

/// "rank 1,3": the focus command for every rank of 0..n-1 not in `done`.
std::string focus_without(int n, const std::set<int>& done) {
    std::string list;
    for (int r = 0; r < n; ++r) {
        if (!done.count(r)) {
            list += (list.empty() ? "" : ",") + std::to_string(r);
        }
    }
    return "rank " + list;
}

/// Waits until every rank of `n` reported a hit of breakpoint 1 at line `line` of main:
/// after each hit, only the ranks that have not arrived continue (those that did stay
/// stopped at the line). Returns the rank that arrived first.
int bring_to_barrier(background_process& dbg, int n, int line) {
    std::set<int> arrived;
    int first = -1;
    while (static_cast<int>(arrived.size()) < n) {
        auto hit = dbg.wait_for_line(std::regex("Breakpoint 1, main .*mpi_stages\\.c:" + std::to_string(line)),
                                     std::chrono::seconds(120));
        REQUIRE(hit);
        auto& seen = dbg.consumed_lines();
        int rank = label_before(seen, seen.size() - 1);
        REQUIRE(rank >= 0);
        arrived.insert(rank);
        if (first < 0) {
            first = rank;
        }
        if (static_cast<int>(arrived.size()) < n) {
            dbg.write_stdin(focus_without(n, arrived) + "\ncontinue\n");
        }
    }
    return first;
}

}  // namespace

TEST_CASE("mpi: break LOC rank LIST and tbreak LOC rank N stop only in the ranks named", "[e2e][mpi]") {
    // Set while the job is held in MPI_Init with the focus on every rank: the rank clause,
    // not the focus, decides where each breakpoint is planted.
    std::string done = example_location("mpi/mpi_stages.c", "done");
    auto r = ompdbg_job({"start", "break compute rank 0,2-3", "tbreak " + done + " rank 1", "info breakpoints",
                         "continue", "continue", "continue", "continue", "continue"},
                         4);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "\tstop only in rank 0,2-3"));
    CHECK(has_line(r.out, "\tstop only in rank 1"));
    auto lines = lines_of(r.out);
    // Breakpoint 1 stops ranks 0, 2 and 3 once each, each showing its own argument under
    // its own label; the temporary one stops rank 1 once, at the line of the mark.
    std::regex hit1(R"(Breakpoint 1, compute \(rank=(\d+)\) at .*mpi_stages\.c:)");
    std::regex hit2(R"(Temporary breakpoint 2, main \(.*\) at .*mpi_stages\.c:(\d+)$)");
    std::multiset<int> compute_hits;
    std::multiset<int> temporary_hits;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (std::regex_search(lines[i], m, hit1)) {
            int rank = std::stoi(m[1]);
            CHECK(label_before(lines, i) == rank);
            compute_hits.insert(rank);
        } else if (std::regex_search(lines[i], m, hit2)) {
            CHECK(std::stoi(m[1]) == example_line("mpi/mpi_stages.c", "done"));
            temporary_hits.insert(label_before(lines, i));
        }
    }
    CHECK(compute_hits == std::multiset<int>{0, 2, 3});
    CHECK(temporary_hits == std::multiset<int>{1});
    // Every rank ran to its end, rank 1 never stopping in compute.
    auto printed = pids_printed(lines);
    REQUIRE(printed.size() == 4);
    for (auto& [rank, pid] : printed) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
        CHECK(has_line(r.out, "[rank " + std::to_string(rank) + "] process " + std::to_string(pid) +
                                  " exited with code 00"));
    }
}

TEST_CASE("mpi: break LOC rank LIST refuses ranks the job does not have", "[e2e][mpi]") {
    auto r = ompdbg_job({"start", "break compute rank 9", "break compute rank 1-x", "break compute rank all",
                         "info breakpoints"},
                         4);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.err, "No rank 9: the job has ranks 0-3."));
    CHECK(has_line(r.err, "Invalid rank list \"1-x\": expected N, N-M, N,M or all."));
    // Only `rank all` made a breakpoint (number 1), planted in every rank: no rank line.
    CHECK(count_lines_starting(r.out, "1       breakpoint") == 1);
    CHECK(count_lines_starting(r.out, "2       breakpoint") == 0);
    CHECK(grep(r.out, "stop only in rank").empty());
}

TEST_CASE("mpi: next over MPI_Barrier with focus on every rank steps all ranks together", "[e2e][mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    REQUIRE(std::filesystem::exists(stages()));
    const int barrier = example_line("mpi/mpi_stages.c", "barrier");
    const int done = example_line("mpi/mpi_stages.c", "done");
    auto args = job_args(4);
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break " + example_location("mpi/mpi_stages.c", "barrier")};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    bring_to_barrier(dbg, 4, barrier);
    // One `next` for the whole job: MPI_Barrier returns only because every rank runs.
    dbg.write_stdin("rank all\nnext\nmpi ranks\n");
    std::regex next_line("^" + std::to_string(done) + R"(\t\s*printf\("rank %d done\\n", rank\);)");
    std::set<int> stepped;
    for (int i = 0; i < 4; ++i) {
        auto l = dbg.wait_for_line(next_line, std::chrono::seconds(120));
        if (!l) {
            break;
        }
        auto& seen = dbg.consumed_lines();
        stepped.insert(label_before(seen, seen.size() - 1));
    }
    auto table = dbg.wait_for_line(std::regex(R"(^(?:\(ompdbg\) )*\s+Rank\s+Host)"), std::chrono::seconds(60));
    std::vector<std::string> rows;
    for (int i = 0; table && i < 4; ++i) {
        if (auto row = dbg.next_line(std::chrono::seconds(60))) {
            rows.push_back(*row);
        }
    }
    dbg.write_stdin("continue\n");
    auto finished = dbg.wait_for_line(std::regex(R"(^\[\S+ exited with code 00\]$)"), std::chrono::seconds(120));
    std::string seen;
    for (auto& l : dbg.consumed_lines()) {
        seen += l + "\n";
    }
    INFO(seen << dbg.stderr_text());
    CHECK(stepped == std::set<int>{0, 1, 2, 3});
    REQUIRE(rows.size() == 4);
    for (auto& row : rows) {
        CHECK(std::regex_search(row, std::regex(R"(^\* \d+\s+\S+\s+\d+\s+stopped\s)")));
    }
    CHECK(finished);
    auto output = without_prompts(dbg.consumed_lines());
    auto printed = pids_printed(output);
    CHECK(printed.size() == 4);
    for (auto& [rank, pid] : printed) {
        CHECK(std::count(output.begin(), output.end(), "rank " + std::to_string(rank) + " done") == 1);
    }
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
}

TEST_CASE("mpi: a one-rank job reports the rank's end, then mpirun's, and stays listed", "[e2e][mpi]") {
    auto r = ompdbg_job({"break compute", "run", "continue", "mpi ranks", "next"}, 1);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto lines = lines_of(r.out);
    auto printed = pids_printed(lines);
    REQUIRE(printed.size() == 1);
    REQUIRE(printed.count(0) == 1);
    std::string pid = std::to_string(printed[0]);
    CHECK(has_line(r.out, "rank 0 done"));
    // The rank's end, then the starter's, in that order.
    auto rank_end = std::find(lines.begin(), lines.end(), "[rank 0] process " + pid + " exited with code 00");
    // (The starter is named as its process is: mpirun, or orterun it links to.)
    auto starter_end = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
        return std::regex_match(l, std::regex(R"(^\[\S+ exited with code 00\]$)"));
    });
    CHECK(rank_end != lines.end());
    CHECK(starter_end != lines.end());
    CHECK(rank_end < starter_end);
    // The job is still the session's: `mpi ranks` lists the rank that ended, with its pid.
    CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
        return std::regex_match(l, std::regex(R"(^\* 0\s+\S+\s+)" + pid + R"(\s+exited\(0\)\s+\S+$)"));
    }));
    // The prompt still works: a step says that no rank runs.
    CHECK(has_line(r.err, "No rank of the focus is running."));
}

TEST_CASE("mpi: Ctrl-C ends a next that waits in MPI_Barrier for ranks outside the focus", "[e2e][mpi]") {
    // A `next` over the barrier with the focus on one rank cannot complete (the other rank
    // is stopped): Ctrl-C interrupts it, the prompt comes back and the job still runs.
    REQUIRE(std::filesystem::exists(mpirun()));
    REQUIRE(std::filesystem::exists(stages()));
    const int barrier = example_line("mpi/mpi_stages.c", "barrier");
    auto args = job_args(2);
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break " + example_location("mpi/mpi_stages.c", "barrier")};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    int first = bring_to_barrier(dbg, 2, barrier);
    dbg.write_stdin("rank " + std::to_string(first) + "\nnext\n");
    // The step runs once the focus is set ("Focus: rank N."); then it can only wait.
    REQUIRE(dbg.wait_for_line(std::regex("Focus: rank " + std::to_string(first) + "\\.$"), std::chrono::seconds(60)));
    std::optional<std::string> interrupted;
    for (int attempt = 0; attempt < 10 && !interrupted; ++attempt) {
        // No sleep decides the outcome: the signal is repeated until the debugger says the
        // rank stopped (a SIGINT that came before the step began is answered by nothing).
        dbg.send_signal(SIGINT);
        interrupted = dbg.wait_for_line(std::regex("received signal SIGINT"), std::chrono::seconds(10));
    }
    std::string seen_text;
    for (auto& l : dbg.consumed_lines()) {
        seen_text += l + "\n";
    }
    INFO(seen_text << dbg.stderr_text());
    REQUIRE(interrupted);
    // The whole job goes on to its end.
    dbg.write_stdin("rank all\ndelete\ncontinue\n");
    auto finished = dbg.wait_for_line(std::regex(R"(^\[\S+ exited with code 00\]$)"), std::chrono::seconds(120));
    CHECK(finished);
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
}
