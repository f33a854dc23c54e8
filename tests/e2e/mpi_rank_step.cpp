// Per-rank breakpoints (`break LOC rank LIST`), ranks stepping together across the focus
// and a one-rank job's end (issue 6), with the real ompdbg on a real `mpirun` of the
// bootstrap Open MPI. Ground truth is what the ranks print about themselves ("rank R of N
// pid P") and the arguments they pass (compute(rank)), never our own tables.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "daily_common.hpp"
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

/// The rank a stop belongs to: in text mode the "[rank N]" label before the hit line, in
/// JSON mode the event's own `rank`.
using rank_of_hit = std::function<int(background_process&, const std::string&)>;

int label_of_hit(background_process& dbg, const std::string&) {
    auto& seen = dbg.consumed_lines();
    return label_before(seen, seen.size() - 1);
}

/// Waits until every rank of `n` reported a hit matching `hit_line`: after each hit, only
/// the ranks that have not arrived continue (those that did stay stopped there). Returns
/// the rank that arrived first.
int bring_to(background_process& dbg, int n, const std::regex& hit_line, const rank_of_hit& rank_of = label_of_hit) {
    std::set<int> arrived;
    int first = -1;
    while (static_cast<int>(arrived.size()) < n) {
        auto hit = dbg.wait_for_line(hit_line, std::chrono::seconds(120));
        REQUIRE(hit);
        int rank = rank_of(dbg, *hit);
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

/// bring_to() for breakpoint 1 at line `line` of main.
int bring_to_barrier(background_process& dbg, int n, int line) {
    return bring_to(dbg, n, std::regex("Breakpoint 1, main .*mpi_stages\\.c:" + std::to_string(line)));
}

/// One line that matched, the rank label it was printed under and its submatches.
struct labelled_match {
    int rank = -1;
    std::vector<std::string> groups;   ///< [0]: the whole match
};

/// Reads lines until `count` of them match `pattern` (two minutes at most for each).
std::vector<labelled_match> labelled_matches(background_process& dbg, const std::regex& pattern, int count) {
    std::vector<labelled_match> out;
    for (int i = 0; i < count; ++i) {
        auto l = dbg.wait_for_line(pattern, std::chrono::seconds(120));
        if (!l) {
            break;
        }
        auto& seen = dbg.consumed_lines();
        labelled_match lm;
        lm.rank = label_before(seen, seen.size() - 1);
        std::smatch m;
        std::regex_search(*l, m, pattern);
        for (const auto& g : m) {
            lm.groups.push_back(g.str());
        }
        out.push_back(std::move(lm));
    }
    return out;
}

std::string consumed_text(const background_process& dbg) {
    std::string seen;
    for (auto& l : dbg.consumed_lines()) {
        seen += l + "\n";
    }
    return seen + dbg.stderr_text();
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

TEST_CASE("mpi: step, until, stepi, finish and advance with the focus on every rank move each rank",
          "[e2e][mpi]") {
    // Two ranks stop on the line that calls compute(rank); each command then runs in both
    // ranks together, and each rank's report comes under its own label. Ground truth: the
    // rank each rank printed it is, and compute()'s result for that rank (sum of i*i, i<=rank).
    REQUIRE(std::filesystem::exists(mpirun()));
    REQUIRE(std::filesystem::exists(stages()));
    const int call = example_line("mpi/mpi_stages.c", "call_compute");
    const int sink = example_line("mpi/mpi_stages.c", "compute_sink");
    const int done = example_line("mpi/mpi_stages.c", "done");
    auto args = job_args(2);
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break " + example_location("mpi/mpi_stages.c", "call_compute")};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    bring_to(dbg, 2, std::regex("Breakpoint 1, main .*mpi_stages\\.c:" + std::to_string(call)));
    auto ranks_of = [](const std::vector<labelled_match>& v) {
        std::multiset<int> r;
        for (const auto& m : v) {
            r.insert(m.rank);
        }
        return r;
    };
    const std::multiset<int> both{0, 1};

    // step: into compute, each rank with its own argument.
    dbg.write_stdin("rank all\ndelete\nstep\n");
    auto stepped = labelled_matches(dbg, std::regex(R"(^(?:\(ompdbg\) )*compute \(rank=(\d+)\) at .*mpi_stages\.c:\d+$)"), 2);
    CHECK(ranks_of(stepped) == both);
    for (const auto& m : stepped) {
        CHECK(m.groups.at(1) == std::to_string(m.rank));
    }
    // until LINE: out of the loop, in both.
    dbg.write_stdin("until " + std::to_string(sink) + "\n");
    auto until = labelled_matches(dbg, std::regex("^(?:\\(ompdbg\\) )*" + std::to_string(sink) + R"(\t\s*sink = v;)"), 2);
    CHECK(ranks_of(until) == both);
    // stepi: one instruction, still inside that line (gdb's "0x... <TAB>LINE" form).
    dbg.write_stdin("stepi\n");
    auto stepi = labelled_matches(
        dbg, std::regex("^(?:\\(ompdbg\\) )*0x[0-9a-f]{16}\\t" + std::to_string(sink) + R"(\t\s*sink = v;)"), 2);
    CHECK(ranks_of(stepi) == both);
    // finish: back in main, with compute(rank)'s value.
    dbg.write_stdin("finish\n");
    auto values = labelled_matches(dbg, std::regex(R"(^(?:\(ompdbg\) )*Value returned is \$\d+ = (\d+)$)"), 2);
    CHECK(ranks_of(values) == both);
    for (const auto& m : values) {
        int expected = 0;
        for (int i = 0; i <= m.rank; ++i) {
            expected += i * i;
        }
        CHECK(m.groups.at(1) == std::to_string(expected));
    }
    // advance LINE: across MPI_Barrier, which returns only because both ranks run.
    dbg.write_stdin("advance " + std::to_string(done) + "\n");
    auto advanced = labelled_matches(dbg, std::regex("^(?:\\(ompdbg\\) )*" + std::to_string(done) + R"(\t\s*printf)"), 2);
    CHECK(ranks_of(advanced) == both);
    dbg.write_stdin("continue\n");
    auto finished = dbg.wait_for_line(std::regex(R"(^\[\S+ exited with code 00\]$)"), std::chrono::seconds(120));
    INFO(consumed_text(dbg));
    CHECK(finished);
    auto printed = pids_printed(without_prompts(dbg.consumed_lines()));
    CHECK(printed.size() == 2);
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
}

TEST_CASE("mpi --json: the job's output goes to stderr, stdout is JSON objects, and a step of every rank reports "
          "each rank's stop with its rank",
          "[e2e][mpi][json]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    REQUIRE(std::filesystem::exists(stages()));
    const int call = example_line("mpi/mpi_stages.c", "call_compute");
    auto args = job_args(2);
    std::vector<std::string> argv{ompdbg_binary, "--json", "-ex",
                                  "break " + example_location("mpi/mpi_stages.c", "call_compute")};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    // A breakpoint hit is a `breakpoint-hit` event of the rank that stopped.
    auto json_rank = [call](background_process&, const std::string& line) {
        auto j = nlohmann::json::parse(line);
        CHECK(j.value("text", "").find("mpi_stages.c:" + std::to_string(call)) != std::string::npos);
        return j.value("rank", -1);
    };
    bring_to(dbg, 2, std::regex(R"("event":"breakpoint-hit")"), json_rank);
    // `next` in both ranks: one location event per rank, on the line after the call.
    dbg.write_stdin("rank all\ndelete\nnext\n");
    std::multiset<int> stepped;
    for (int i = 0; i < 2; ++i) {
        auto l = dbg.wait_for_line(std::regex(R"("event":"location")"), std::chrono::seconds(120));
        if (!l) {
            break;
        }
        auto j = nlohmann::json::parse(*l);
        stepped.insert(j.value("rank", -1));
        CHECK(j.value("line", 0) == call + 1);
        CHECK(j.value("function", "") == "main");
    }
    CHECK(stepped == std::multiset<int>{0, 1});
    dbg.write_stdin("continue\n");
    auto finished = dbg.wait_for_line(std::regex(R"("event":"starter-exited")"), std::chrono::seconds(120));
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    INFO(consumed_text(dbg));
    CHECK(finished);
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
    // Every stdout line is one JSON object; the ranks' own lines are on stderr.
    std::vector<std::string> all = dbg.consumed_lines();
    for (const auto& l : lines_of(end->out)) {
        all.push_back(l);
    }
    for (const auto& l : all) {
        INFO(l);
        CHECK_NOTHROW(nlohmann::json::parse(l).is_object());
        CHECK(nlohmann::json::parse(l).is_object());
    }
    auto printed = pids_printed(dbg.stderr_text() + end->err);
    CHECK(printed.size() == 2);
    for (const auto& [rank, pid] : printed) {
        CHECK(has_line(dbg.stderr_text() + end->err, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi: stepi of every rank while one rank blocks in a system call: the others' steps end and report, and "
          "Ctrl-C ends the blocked one",
          "[e2e][mpi]") {
    // Rank 0 waits in open(2) of a FIFO that rank 1 opens only after send_line(), where the
    // job stops. A stepi of both ranks cannot end in rank 0 (rank 1 runs one instruction):
    // rank 1's step is reported all the same, and Ctrl-C ends rank 0's; then the job runs
    // to its end, rank 0 receiving rank 1's line. Before, rank 0's step waited in ptrace
    // and held rank 1's up, and Ctrl-C could not end it.
    const std::string program = std::string(examples_dir) + "/mpi/mpi_blocked_step";
    REQUIRE(std::filesystem::exists(mpirun()));
    REQUIRE(std::filesystem::exists(program));
    daily::scratch_dir dir;
    const std::string fifo = (dir.path() / "line.fifo").string();
    const int send = example_line("mpi/mpi_blocked_step.c", "send_line");
    const int blocked = example_line("mpi/mpi_blocked_step.c", "blocked_open");
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break send_line", "run", mpirun(), "--allow-run-as-root",
                                  "--oversubscribe", "-np", "2", program, fifo};
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    auto hit = dbg.wait_for_line(std::regex("Breakpoint 1, send_line \\(rank=1\\) at .*mpi_blocked_step\\.c:" +
                                            std::to_string(send)),
                                 std::chrono::seconds(120));
    REQUIRE(hit);
    // Rank 0 is inside open() (called from main's line blocked_open), not before it.
    dbg.write_stdin("rank 0\nbt\n");
    auto in_open = dbg.wait_for_line(std::regex("#\\d+ +0x[0-9a-f]+ in main \\(.*\\) at .*mpi_blocked_step\\.c:" +
                                                std::to_string(blocked) + "$"),
                                     std::chrono::seconds(60));
    INFO(consumed_text(dbg));
    REQUIRE(in_open);
    dbg.write_stdin("rank all\nstepi\n");
    auto stepped = labelled_matches(
        dbg, std::regex("^(?:\\(ompdbg\\) )*0x[0-9a-f]{16}\\t" + std::to_string(send) + R"(\t\s*sink = rank;)"), 1);
    REQUIRE(stepped.size() == 1);
    CHECK(stepped[0].rank == 1);
    std::optional<std::string> interrupted;
    for (int attempt = 0; attempt < 10 && !interrupted; ++attempt) {
        // Repeated until the debugger says rank 0 stopped (see the Ctrl-C test above).
        dbg.send_signal(SIGINT);
        interrupted = dbg.wait_for_line(std::regex("received signal SIGINT"), std::chrono::seconds(10));
    }
    REQUIRE(interrupted);
    CHECK(label_before(dbg.consumed_lines(), dbg.consumed_lines().size() - 1) == 0);
    dbg.write_stdin("delete\ncontinue\n");
    auto finished = dbg.wait_for_line(std::regex(R"(^\[\S+ exited with code 00\]$)"), std::chrono::seconds(120));
    INFO(consumed_text(dbg));
    CHECK(finished);
    auto output = without_prompts(dbg.consumed_lines());
    CHECK(std::count(output.begin(), output.end(), "rank 0 received hello") == 1);
    CHECK(pids_printed(output).size() == 2);
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
}
