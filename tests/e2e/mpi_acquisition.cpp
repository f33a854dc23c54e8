// MPI jobs end to end (issue 6): the real ompdbg on a real `mpirun -np 4` of the bootstrap
// Open MPI (4 ranks on a loaded 2-core machine: --oversubscribe). Ground truth is what the
// ranks print about themselves ("rank R of N pid P"), never our own tables.

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cli_common.hpp"
#include "mpi_job_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi;

namespace {

std::vector<std::string> job_args(const std::vector<std::string>& prog_args = {}) {
    return mpi::job_args(4, prog_args);
}

run_result ompdbg_job(const std::vector<std::string>& cmds, const std::vector<std::string>& prog_args = {}) {
    return mpi::ompdbg_job(cmds, 4, prog_args);
}

/// rank -> pid from `mpi ranks` rows ("* 0     host   1234    stopped    /path").
std::map<int, int> pids_listed(const std::string& out) {
    std::map<int, int> m;
    std::regex re(R"(^[* ] (\d+)\s+\S+\s+(\d+)\s+(\S+)\s+(\S+)$)");
    for (auto& l : lines_of(out)) {
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[1])] = std::stoi(mm[2]);
        }
    }
    return m;
}

bool has_line_containing(const std::string& out, const std::string& piece) {
    for (auto& l : lines_of(out)) {
        if (l.find(piece) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST_CASE("mpi: run -- mpirun acquires every rank before its code runs past MPI_Init", "[e2e][mpi]") {
    auto r = ompdbg_job({"start", "mpi ranks", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "[MPI job: 4 ranks of " + stages() + " acquired]"));
    auto listed = pids_listed(r.out);
    auto printed = pids_printed(r.out);
    REQUIRE(listed.size() == 4);
    REQUIRE(printed.size() == 4);
    CHECK(listed == printed);   // the proctable names the processes that say they are the ranks
    // The table was printed (and flushed) while the ranks were held: no rank line before it.
    auto table_at = r.out.find("  Rank  Host");
    auto first_rank_line = r.out.find("\nrank ");
    REQUIRE(table_at != std::string::npos);
    CHECK(table_at < first_rank_line);
    for (auto& [rank, pid] : printed) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
        CHECK(has_line(r.out, "[rank " + std::to_string(rank) + "] process " + std::to_string(pid) +
                                  " exited with code 00"));
    }
}

TEST_CASE("mpi: a breakpoint is planted in every rank and each rank reports its hit", "[e2e][mpi]") {
    auto r = ompdbg_job({"break compute", "run", "continue", "continue", "continue", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    // Each hit is labelled with its rank and shows that rank's own argument.
    std::set<int> hit;
    auto lines = lines_of(r.out);
    std::regex label(R"(^\[rank (\d+)\]$)");
    std::regex hit_re(R"(hit Breakpoint 1, compute \(rank=(\d+)\) at .*mpi_stages\.c:)");
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
        std::smatch m1, m2;
        if (std::regex_match(lines[i], m1, label)) {
            // "[rank N]", an empty line, then the hit (gdb's stop report).
            for (std::size_t j = i + 1; j <= i + 2; ++j) {
                if (std::regex_search(lines[j], m2, hit_re)) {
                    CHECK(m1[1] == m2[1]);
                    hit.insert(std::stoi(m2[1]));
                }
            }
        }
    }
    CHECK(hit == std::set<int>{0, 1, 2, 3});
    CHECK(count_lines_starting(r.out, "rank ") == 8);   // 4 "rank R of 4" + 4 "rank R done"
}

TEST_CASE("mpi: a breakpoint set with a focus is planted in the focused ranks only, continue resumes all",
          "[e2e][mpi]") {
    // `start` holds the job in MPI_Init; the breakpoint set while the focus is rank 1 belongs
    // to rank 1 (as in TotalView and DDT), and the job then runs with the focus on every rank.
    auto r = ompdbg_job({"start", "rank 1", "break compute", "rank all", "info breakpoints", "continue", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "\tstop only in rank 1"));
    // Exactly one hit, in rank 1, with rank 1's own argument.
    std::regex hit_re(R"(hit Breakpoint 1, compute \(rank=(\d+)\))");
    int hits = 0;
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, hit_re)) {
            ++hits;
            CHECK(m[1] == "1");
        }
    }
    CHECK(hits == 1);
    // Every rank ran to its end: the ranks outside the breakpoint's set never stopped.
    auto printed = pids_printed(r.out);
    REQUIRE(printed.size() == 4);
    for (auto& [rank, pid] : printed) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
        CHECK(has_line(r.out, "[rank " + std::to_string(rank) + "] process " + std::to_string(pid) +
                                  " exited with code 00"));
    }
}

TEST_CASE("mpi: mpi stacks merges every rank's stacks into one tree with rank ranges", "[e2e][mpi]") {
    std::string dot = "/tmp/ompdbg-mpi-stacks-" + std::to_string(::getpid()) + ".dot";
    auto r = ompdbg_job({"break all_parked", "run", "mpi stacks --dot " + dot, "rank all", "print released = 1",
                         "delete", "continue"},
                        {"park"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line_containing(r.out, "hit Breakpoint 1, all_parked (count=4)"));
    // The program guarantees where every rank is when rank 0 reaches all_parked: ranks
    // 1..3 inside park() (they told rank 0 from there), rank 0 in park_root().
    CHECK(has_line_containing(r.out, "main [rank 0-3]"));
    CHECK(has_line_containing(r.out, "wait_even [rank 0,2]"));
    CHECK(has_line_containing(r.out, "wait_odd [rank 1,3]"));
    CHECK(has_line_containing(r.out, "park_root [rank 0]"));
    CHECK(has_line_containing(r.out, "all_parked [rank 0]"));
    CHECK(has_line_containing(r.out, "park [rank 2]"));
    CHECK(has_line_containing(r.out, "park [rank 1,3]"));
    // The tree's shape: wait_odd hangs under main, park under wait_odd.
    auto lines = lines_of(r.out);
    auto depth = [](const std::string& l) { return l.find_first_not_of(" |`-"); };
    std::size_t main_i = 0, odd_i = 0, park_i = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find("main [rank 0-3]") != std::string::npos) {
            main_i = i;
        } else if (lines[i].find("wait_odd [rank 1,3]") != std::string::npos) {
            odd_i = i;
        } else if (lines[i].find("park [rank 1,3]") != std::string::npos) {
            park_i = i;
        }
    }
    REQUIRE(main_i < odd_i);
    REQUIRE(odd_i < park_i);
    CHECK(depth(lines[main_i]) < depth(lines[odd_i]));
    CHECK(depth(lines[odd_i]) < depth(lines[park_i]));
    // The Graphviz file holds the same tree.
    std::ifstream in(dot);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().rfind("digraph mpi_stacks {", 0) == 0);
    CHECK(text.str().find("wait_odd\\n2:[1,3]") != std::string::npos);
    std::filesystem::remove(dot);
    // Released through `print` in every rank: each finishes.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi: rank focus, per-rank commands and bad rank lists", "[e2e][mpi]") {
    auto r = ompdbg_job({"break all_parked", "run", "rank 1-2", "print my_rank", "rank 99", "rank 2-1", "rank x",
                         "rank all", "print released = 1", "delete", "continue"},
                        {"park"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "Focus: rank 1-2."));
    // `print rank` ran once per focused rank, labelled, each with its own value.
    auto a = r.out.find("[rank 1]\n$");
    auto b = r.out.find("[rank 2]\n$");
    CHECK(a != std::string::npos);
    CHECK(b != std::string::npos);
    CHECK(std::regex_search(r.out, std::regex(R"(\[rank 1\]\n\$\d+ = 1\n\[rank 2\]\n\$\d+ = 2\n)")));
    CHECK(has_line_containing(r.err, "No rank 99: the job has ranks 0-3."));
    CHECK(has_line_containing(r.err, "Invalid rank range \"2-1\"."));
    CHECK(has_line_containing(r.err, "Invalid rank list \"x\""));
    CHECK(has_line(r.out, "Focus: rank 0-3."));
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi: mpirun that cannot start its program shows mpirun's error, no hang", "[e2e][mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    auto r = ompdbg_batch({"run", mpirun(), "--allow-run-as-root", "--oversubscribe", "-np", "4",
                           "/nonexistent/mpi_program"},
                          run_options().timeout_after(std::chrono::seconds(120)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK_FALSE(r.ok());
    CHECK(r.all().find("/nonexistent/mpi_program") != std::string::npos);   // mpirun's own message
    CHECK(has_line_containing(r.err, "before spawning the MPI job."));
}

TEST_CASE("mpi: mpi attach to a process that is not an MPI starter says so", "[e2e][mpi]") {
    background_process prog({example_path("counter")});
    REQUIRE(prog.next_line());   // it runs (first line printed)
    auto r = ompdbg_batch({"-ex", "mpi attach " + std::to_string(prog.pid())},
                          run_options().timeout_after(std::chrono::seconds(60)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK_FALSE(r.ok());
    CHECK(has_line_containing(r.err, "Process " + std::to_string(prog.pid()) +
                                         " (counter) is not an MPI starter: it has no "
                                         "MPIR_Breakpoint/MPIR_proctable."));
    // It was let go again: still running.
    CHECK(prog.next_line());
}

TEST_CASE("mpi: a rank killed from outside during continue is reported and the rest goes on", "[e2e][mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    auto args = job_args({"park"});
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break all_parked"};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv);
    // run: stops at all_parked with every rank parked; the table gives rank 2's pid.
    auto hit = dbg.wait_for_line(std::regex("hit Breakpoint 1, all_parked"), std::chrono::seconds(120));
    REQUIRE(hit);
    dbg.write_stdin("mpi ranks\n");
    auto row = dbg.wait_for_line(std::regex(R"(^[* ] 2\s+\S+\s+\d+\s+stopped)"), std::chrono::seconds(60));
    REQUIRE(row);
    std::smatch m;
    std::regex_search(*row, m, std::regex(R"(^[* ] 2\s+\S+\s+(\d+))"));
    pid_t victim = static_cast<pid_t>(std::stoi(m[1]));
    // Continue (ranks spin in park()), then kill rank 2 while the command is running.
    dbg.write_stdin("delete\ncontinue\n");
    REQUIRE(::kill(victim, SIGKILL) == 0);
    auto gone = dbg.wait_for_line(std::regex(R"(^\[rank 2\] process \d+ was killed by signal SIGKILL)"),
                                  std::chrono::seconds(60));
    REQUIRE(gone);
    // Open MPI then aborts the job: the debugger reports every end and returns to the prompt.
    dbg.write_stdin("mpi ranks\n");
    auto after = dbg.wait_for_line(std::regex(R"([* ] 2\s+\S+\s+\d+\s+SIGKILL)"), std::chrono::seconds(120));
    std::string seen;
    for (auto& l : dbg.consumed_lines()) {
        seen += l + "\n";
    }
    INFO(seen << dbg.stderr_text());
    CHECK(after);
    dbg.write_stdin("quit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
}

TEST_CASE("mpi: attach to a running mpirun acquires every rank of its job", "[e2e][mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    background_process job({mpirun(), "--allow-run-as-root", "--oversubscribe", "-np", "4", stages(), "park"},
                           run_options().timeout_after(std::chrono::seconds(180)));
    std::map<int, int> printed;
    std::regex re(R"(^rank (\d+) of 4 pid (\d+)$)");
    while (printed.size() < 4) {
        auto l = job.wait_for_line(re, std::chrono::seconds(120));
        REQUIRE(l);
        std::smatch m;
        std::regex_match(*l, m, re);
        printed[std::stoi(m[1])] = std::stoi(m[2]);
    }
    // A rank has mpirun's MPIR symbols too (libopen-rte) but no table: attached on its own,
    // it is a plain process at once, nothing waits for tasks to start.
    auto rank = ompdbg_batch({"-ex", "info inferiors", "-ex", "detach", "attach", std::to_string(printed[1])},
                             run_options().timeout_after(std::chrono::seconds(20)));
    INFO(rank.all());
    REQUIRE_FALSE(rank.timed_out);
    CHECK(rank.ok());
    CHECK(rank.out.find("Waiting for") == std::string::npos);
    CHECK(rank.out.find("MPI job:") == std::string::npos);
    CHECK(std::regex_search(rank.out, std::regex("\\* 1 +process " + std::to_string(printed[1]) + " ")));
    // The ranks spin in park() until `released` is set: release them from the debugger.
    auto r = ompdbg_batch({"-ex", "mpi ranks", "-ex", "rank all", "-ex", "print released = 1", "-ex", "detach",
                           "attach", std::to_string(job.pid())},
                          run_options().timeout_after(std::chrono::seconds(120)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(pids_listed(r.out) == printed);
    CHECK(has_line(r.out, "[MPI job: 4 ranks detached]"));
    std::set<std::string> done;
    while (done.size() < 4) {
        auto l = job.wait_for_line(std::regex(R"(^rank \d+ done$)"), std::chrono::seconds(60));
        REQUIRE(l);
        done.insert(*l);
    }
    auto end = job.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK(end->ok());
}

TEST_CASE("mpi: Debian's stripped Open MPI: acquisition and merged stacks work, mpi queues names what is missing",
          "[e2e][mpi]") {
    const std::string debian_mpirun = "/usr/bin/mpirun";
    const std::string prog = std::string(examples_dir) + "/mpi/mpi_stages-debian-ompi";
    if (!std::filesystem::exists(prog) || !std::filesystem::exists(debian_mpirun)) {
        WARN("skipped: Debian's Open MPI is not installed");
        return;
    }
    auto args = ex_args({"break all_parked", "run", "mpi ranks", "mpi stacks", "mpi queues", "mpi deadlock",
                         "rank all", "print released = 1", "delete", "continue"});
    for (const char* a : {"run", "/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4"}) {
        args.push_back(a);
    }
    args.push_back(prog);
    args.push_back("park");
    auto r = ompdbg_batch(args, run_options().timeout_after(std::chrono::seconds(280)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    // Acquisition through the MPIR symbols of Debian's (stripped) Open MPI: every rank, the
    // process table naming the processes that say they are the ranks.
    CHECK(has_line(r.out, "[MPI job: 4 ranks of " + prog + " acquired]"));
    auto listed = pids_listed(r.out);
    auto printed = pids_printed(r.out);
    REQUIRE(printed.size() == 4);
    CHECK(listed == printed);
    CHECK(has_line_containing(r.out, "hit Breakpoint 1, all_parked (count=4)"));
    // Merged stacks: the program's own frames have DWARF, whatever Open MPI lacks.
    CHECK(has_line_containing(r.out, "main [rank 0-3]"));
    CHECK(has_line_containing(r.out, "wait_odd [rank 1,3]"));
    CHECK(has_line_containing(r.out, "all_parked [rank 0]"));
    // The message-queue DLL is found and loads, but libmpi has no DWARF: the missing types
    // are named, with how to get an Open MPI that has them.
    CHECK(has_line_containing(r.err, "missing type opal_list_item_t"));
    CHECK(has_line_containing(r.err, "scripts/bootstrap"));
    CHECK(has_line_containing(r.err, "No rank's message queues could be read"));
    // Released from the debugger, every rank finishes.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi: run -- srun goes through MPIR as mpirun does (a program named srun without MPIR is refused)",
          "[e2e][mpi]") {
    // No Slurm here: a copy of /bin/true named srun shows that `run srun ...` is taken as an
    // MPI starter (acquired through MPIR, which it lacks), not run as a plain program.
    char tmpl[] = "/tmp/ompdbg-srun-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::filesystem::path dir = tmpl;
    const auto srun = dir / "srun";
    std::filesystem::copy_file("/bin/true", srun);
    auto r = ompdbg_batch({"run", srun.string(), "-n", "2", "/bin/true"},
                          run_options().timeout_after(std::chrono::seconds(60)));
    std::filesystem::remove_all(dir);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK_FALSE(r.ok());
    CHECK(has_line_containing(r.err, "srun is not an MPI starter: it has no MPIR_Breakpoint/MPIR_proctable."));
}

TEST_CASE("mpi: Ctrl-C during continue stops every rank, each shows its stack, and kill ends the job", "[e2e][mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));
    auto args = job_args({"park"});
    std::vector<std::string> argv{ompdbg_binary, "-ex", "break all_parked"};
    argv.insert(argv.end(), args.begin(), args.end());
    background_process dbg(argv, run_options().timeout_after(std::chrono::seconds(240)));
    REQUIRE(dbg.wait_for_line(std::regex("hit Breakpoint 1, all_parked"), std::chrono::seconds(120)));
    // The ranks spin in park() until told otherwise: continue never ends by itself.
    dbg.write_stdin("delete\ncontinue\n");
    std::optional<std::string> interrupted;
    for (int attempt = 0; attempt < 10 && !interrupted; ++attempt) {
        // Repeated until the debugger reports the stop: a SIGINT that arrives before the
        // ranks are resumed is answered by nothing.
        dbg.send_signal(SIGINT);
        interrupted = dbg.wait_for_line(std::regex("received signal SIGINT"), std::chrono::seconds(10));
    }
    REQUIRE(interrupted);
    // Every rank is stopped and each one's stack is inside the parking code.
    dbg.write_stdin("mpi ranks\nrank all\nbt\necho BT-DONE\\n\n");
    auto done = dbg.wait_for_line(std::regex("BT-DONE"), std::chrono::seconds(120));
    std::string seen;
    for (auto& l : dbg.consumed_lines()) {
        seen += l + "\n";
    }
    INFO(seen << dbg.stderr_text());
    REQUIRE(done);
    auto table = pids_listed(seen);
    CHECK(table.size() == 4);
    int stopped = 0;
    for (auto& l : lines_of(seen)) {
        if (std::regex_match(l, std::regex(R"(^[* ] \d\s+\S+\s+\d+\s+stopped\s+\S+$)"))) {
            ++stopped;
        }
    }
    CHECK(stopped == 4);
    for (int rank = 0; rank < 4; ++rank) {
        // Each rank's bt is labelled and shows a frame of the parking code.
        auto label = seen.rfind("[rank " + std::to_string(rank) + "]");   // the bt's label
        REQUIRE(label != std::string::npos);
        auto next = seen.find("[rank ", label + 1);
        std::string part = seen.substr(label, next == std::string::npos ? std::string::npos : next - label);
        CHECK(std::regex_search(part, std::regex(R"(in (park|park_root|wait_even|wait_odd|all_parked) \()")));
    }
    dbg.write_stdin("kill\nquit\n");
    dbg.close_stdin();
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK_FALSE(end->timed_out);
    // Every rank goes (mpirun's daemon reaps them once the job is killed).
    for (auto& [rank, pid] : table) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::filesystem::exists("/proc/" + std::to_string(pid)) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));   // polling /proc, not synchronising
        }
        CHECK_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid)));
    }
}
