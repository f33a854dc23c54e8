// Processes on other hosts through gdbserver agents (issue 18), on hosts simulated with
// Linux namespaces (tests/cluster/, support/cluster.hpp) and the real gdbserver, as a user
// runs them: `target extended-remote | RSH HOST gdbserver --multi -`, `attach PID`, bt,
// print, break, continue, detach; `target remote`; HOST:PORT; and the faults: gdbserver
// missing on the host, the remote shell failing, the agent killed mid-command; OMPD on a
// remote OpenMP process. Every wait is bounded; each test removes every host it made, also
// when it fails.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "remote_counter.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

constexpr auto step_timeout = 60s;
const std::regex prompt_re(R"(\(ompdbg\) $)");

}  // namespace

TEST_CASE("target extended-remote through a remote shell attaches a process of another host: bt, print, break, "
          "continue, detach, as gdb does",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    remote_counter prog(cluster, "node1");
    std::string connect = "target extended-remote " + cluster.agent("node1");
    std::vector<std::string> cmds{connect, "attach " + prog.pid, "info inferiors", "bt", "print current > 2",
                                  "info threads", "monitor help", "break print_counter", "continue",
                                  "bt", "print n == current + 1", "detach"};
    auto r = ompdbg_batch(ex_args(cmds), cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    // The connection, named as gdb names it.
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +process )" + prog.pid + R"( +1 \(extended-remote \| .*/rsh node1 gdbserver --multi -\) +.*/counter)")));
    // The stack of a process on the other host, symbolized from the same files here.
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +0x[0-9a-f]+ in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    CHECK(std::regex_search(r.out, std::regex(R"(\$1 = 1)")));
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +Thread .*"counter")")));
    CHECK(has_line(r.out, "The following monitor commands are supported:"));
    int line = example_line("counter.c", "print") - 1;
    CHECK(std::regex_search(r.out, std::regex(R"(Breakpoint 1, print_counter \(n=\d+\) at .*counter\.c:)" + std::to_string(line))));
    CHECK(std::regex_search(r.out, std::regex(R"(#0 +print_counter \(n=\d+\) at .*counter\.c:)" + std::to_string(line))));
    CHECK(std::regex_search(r.out, std::regex(R"(\$2 = 1)")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + prog.pid + ") detached]"));
    prog.check_runs_on();

    // gdb, through the same agent command on the same process, prints the same lines from
    // the breakpoint on (before it, gdb reads the files through the agent and says so).
    std::vector<std::string> same{connect, "attach " + prog.pid, "break print_counter", "continue", "bt", "detach"};
    auto ours = ompdbg_batch(ex_args(same), cluster.options(run_options().timeout_after(step_timeout)));
    std::vector<std::string> gdb_args{"-ex", "set sysroot /"};
    for (auto& a : ex_args(same)) {
        gdb_args.push_back(a);
    }
    auto theirs = gdb_batch(gdb_args, cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE(ours.ok());
    auto from_break = [](const std::string& out) {
        auto at = out.find("Breakpoint 1 at");
        return at == std::string::npos ? std::string() : masked(out.substr(at));
    };
    CHECK_FALSE(from_break(ours.out).empty());
    CHECK(from_break(ours.out) == from_break(theirs.out));
    prog.check_runs_on();
}

TEST_CASE("target remote takes the process a gdbserver started with --attach holds, and target extended-remote "
          "HOST:PORT reaches an agent over TCP on loopback",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    remote_counter prog(cluster, "node1");
    auto r = ompdbg_batch(ex_args({"target remote | " + cluster.rsh() + " node1 gdbserver - --attach " + prog.pid, "bt",
                                   "info inferiors", "detach"}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    CHECK(r.ok());
    CHECK(std::regex_search(r.out, std::regex(R"(in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    CHECK(std::regex_search(r.out, std::regex(R"(1 \(remote \| .*gdbserver - --attach )" + prog.pid + R"(\))")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + prog.pid + ") detached]"));
    prog.check_runs_on();

    // An agent listening on a port of the host (loopback is shared by the hosts).
    background_process agent({cluster.rsh(), "node1", "exec gdbserver --multi --once 127.0.0.1:0 2>&1"}, cluster.options());
    auto listening = agent.wait_for_line(std::regex("^Listening on port [0-9]+$"), step_timeout);
    REQUIRE(listening);
    std::string port = listening->substr(listening->rfind(' ') + 1);
    auto t = ompdbg_batch(ex_args({"target extended-remote 127.0.0.1:" + port, "attach " + prog.pid, "bt", "detach"}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << t.out << "\nompdbg stderr:\n" << t.err);
    CHECK(t.ok());
    CHECK(std::regex_search(t.out, std::regex(R"(in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    prog.check_runs_on();
}

TEST_CASE("disconnect leaves the process to a gdbserver --multi, and connecting again takes it back, as gdb does",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    remote_counter prog(cluster, "node1");
    // An agent that outlives its connections (no --once), on a port of the host.
    background_process agent({cluster.rsh(), "node1", "exec gdbserver --multi 127.0.0.1:0 2>&1"}, cluster.options());
    auto listening = agent.wait_for_line(std::regex("^Listening on port [0-9]+$"), step_timeout);
    REQUIRE(listening);
    std::string connect = "target extended-remote 127.0.0.1:" + listening->substr(listening->rfind(' ') + 1);
    auto r = ompdbg_batch(ex_args({connect, "attach " + prog.pid, "disconnect", "info inferiors", "bt", connect,
                                   "info inferiors", "bt", "detach"}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    // Disconnected: no process, and no error for it.
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +<null> +.*/counter)")));
    CHECK(has_line(r.err, "No stack."));
    // Connected again: the agent still held the process stopped and gives it back.
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +process )" + prog.pid + R"( +1 \(extended-remote 127\.0\.0\.1:\d+\))")));
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +0x[0-9a-f]+ in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + prog.pid + ") detached]"));
    prog.check_runs_on();
}

TEST_CASE("a host without gdbserver and a remote shell that fails are one line each, naming the host", "[cli][remote]") {
    simulated_cluster cluster({"node1"}, {"node1"});
    auto r = ompdbg_batch(ex_args({"target extended-remote " + cluster.agent("node1"), "info inferiors"}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    CHECK_FALSE(r.ok());
    CHECK_FALSE(r.timed_out);
    CHECK(has_line(r.err, "gdbserver is not installed on host node1 (bash: line 1: gdbserver: command not found (exit status "
                          "127)): install it there (Debian, Ubuntu: apt-get install gdbserver)."));
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +<null>)")));   // the debugger goes on

    auto s = ompdbg_batch(ex_args({"target extended-remote " + cluster.agent("node9")}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stderr:\n" << s.err);
    CHECK(has_line(s.err, "Cannot start the remote agent on host node9: ssh: Could not resolve hostname node9: Name or "
                          "service not known (exit status 255)"));
}

TEST_CASE("the agent killed while the remote process runs ends the command with one line, without a hang", "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    remote_counter prog(cluster, "node1");
    background_process dbg({ompdbg_binary}, cluster.options());
    REQUIRE(dbg.wait_for_output(prompt_re, step_timeout));
    dbg.write_stdin("target extended-remote " + cluster.agent("node1") + "\n");
    REQUIRE(dbg.wait_for_output(prompt_re, step_timeout));
    dbg.write_stdin("attach " + prog.pid + "\n");
    REQUIRE(dbg.wait_for_output(prompt_re, step_timeout));
    long stopped_at = prog.last_value();
    dbg.write_stdin("continue\n");
    // Running again under the agent: the counter goes on.
    REQUIRE(prog.proc.wait_for_line(std::regex("^counter " + std::to_string(stopped_at + 2) + "$"), step_timeout));
    auto killed = run({cluster.rsh(), "node1", "kill -KILL $(pgrep -x gdbserver)"}, cluster.options());
    REQUIRE(killed.ok());
    auto out = dbg.wait_for_output(prompt_re, step_timeout);
    INFO("ompdbg stderr:\n" << dbg.stderr_text());
    REQUIRE(out);
    CHECK(dbg.stderr_text().find("Remote connection closed (| " + cluster.rsh() + " node1 gdbserver --multi -)") !=
          std::string::npos);
    // The debugger still answers, and the program (let go by the kernel) runs on.
    dbg.write_stdin("info inferiors\n");
    REQUIRE(dbg.wait_for_output(prompt_re, step_timeout));
    dbg.write_stdin("quit\n");
    auto end = dbg.wait_exit(step_timeout);
    REQUIRE(end);
    prog.check_runs_on();
}

TEST_CASE("omp threads and omp parallel on an OpenMP process of another host: OMPD through the remote process",
          "[cli][remote][ompd]") {
    std::string prog_path = std::string(examples_dir) + "/openmp/omp_barrier_stuck";
    if (!std::filesystem::exists(prog_path)) {
        return;   // the OMPD runtime is not built here (scripts/bootstrap)
    }
    simulated_cluster cluster({"node1"});
    // OMP_DEBUG=enabled through env(1): the host's shell runs `env ... PROG`.
    background_process prog(cluster.on_host("node1", {"env", "OMP_DEBUG=enabled", prog_path}), cluster.options());
    auto first = prog.next_line(step_timeout);
    REQUIRE(first);
    auto stuck = prog.wait_for_line(std::regex("truth: stuck team_size=4"), step_timeout);
    REQUIRE(stuck);
    auto r = ompdbg_batch(ex_args({"target extended-remote " + cluster.agent("node1"), "attach " + *first, "omp threads",
                                   "omp parallel", "detach"}),
                          cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    // Threads 0-2 wait in the barrier; thread 3 never reaches it (what the program says of
    // itself), read by libompd through callbacks on the remote process.
    int in_barrier = 0, rows = 0;
    std::regex row(R"(^[* ] +\d+ +\d+ +(\d) +(ompt_state_\S+) +\S+ +1 +4 +main\.omp_outlined at omp_barrier_stuck\.c:\d+$)");
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_match(l, m, row)) {
            ++rows;
            in_barrier += m[2] == "ompt_state_wait_barrier_explicit";
        }
    }
    CHECK(rows == 4);
    CHECK(in_barrier == 3);
    CHECK(std::regex_search(r.out, std::regex(R"(Parallel region at level 1: team size 4)")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + *first + ") detached]"));
    CHECK(prog.running());
}

TEST_CASE("watch, rwatch and a local's watchpoint on a process of another host: the agent's debug registers, "
          "as gdb does",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    // gdbserver starts the program on the host; both debuggers run the same script.
    std::vector<std::string> cmds{"target remote | " + cluster.rsh() + " node1 gdbserver - " + example_path("watched"),
                                  "break main",
                                  "continue",
                                  "watch hot.counter",
                                  "rwatch read_me",
                                  "continue",
                                  "continue",
                                  "continue",
                                  "continue",
                                  "continue",
                                  "info watchpoints",
                                  "delete",
                                  "break local_scope",
                                  "continue",
                                  "watch local",
                                  "continue",
                                  "continue",
                                  "continue",
                                  "delete",
                                  "continue"};
    auto ours = ompdbg_batch(ex_args(cmds), cluster.options(run_options().timeout_after(step_timeout)));
    std::vector<std::string> gdb_args{"-ex", "set sysroot /"};
    for (auto& a : ex_args(cmds)) {
        gdb_args.push_back(a);
    }
    auto theirs = gdb_batch(gdb_args, cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    // What the watchpoints report, from the first one set on.
    const std::string pattern = "^(Hardware|Watchpoint|Old value|New value|Value = |Num |[0-9]+ +(hw|read|acc)|\t"
                                "breakpoint already|bump |main |local_scope |[0-9]+\t)";
    auto lines = [&](const std::string& out) {
        auto at = out.find("Hardware watchpoint 2: hot.counter");
        return at == std::string::npos ? std::string() : joined(grep(masked(out.substr(at)), pattern));
    };
    CHECK(lines(theirs.out).find("Old value = 3") != std::string::npos);
    CHECK(lines(ours.out) == lines(theirs.out));
    CHECK(ours.out.find("Watchpoint 5 deleted because the program has left the block in") != std::string::npos);
    CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
    // What the program printed reaches the user, as with gdb (gdbserver sends it to its stderr).
    CHECK(has_line(ours.err, "counter 1000 neighbour 4999950000 sink 7 doubled 42"));
}

TEST_CASE("target extended-remote then run: the agent starts the program on its host, a breakpoint hits, it runs to "
          "its end, as gdb does",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "break bump", "run", "bt",
                                  "print *p", "info inferiors", "delete", "continue"};
    auto args = ex_args(cmds);
    args.push_back(example_path("watched"));
    auto ours = ompdbg_batch(args, cluster.options(run_options().timeout_after(step_timeout)));
    // gdb runs nothing over extended-remote without `set remote exec-file`; ompdbg runs the
    // program it debugs, at the same path on the host (as it reads it here).
    std::vector<std::string> gdb_args{"-ex", "set sysroot /", "-ex", "set remote exec-file " + example_path("watched")};
    gdb_args.insert(gdb_args.end(), args.begin(), args.end());
    auto theirs = gdb_batch(gdb_args, cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.ok());
    auto from_hit = [](const std::string& out) {
        auto at = out.find("Breakpoint 1, ");
        return at == std::string::npos ? std::string()
                                       : joined(grep(masked(out.substr(at)), "^(Breakpoint|#|\\$|\\[Inferior|[0-9]+\t)"));
    };
    CHECK_FALSE(from_hit(theirs.out).empty());
    CHECK(from_hit(ours.out) == from_hit(theirs.out));
    // The process is the host's: its pid there, and the connection in info inferiors.
    CHECK(std::regex_search(ours.out, std::regex(R"(\* 1 +process \d+ +1 \(extended-remote \| .*/rsh node1 gdbserver --multi -\) +.*/watched)")));
    CHECK(ours.out.find("exited normally]") != std::string::npos);
    CHECK(has_line(ours.err, "counter 1000 neighbour 4999950000 sink 7 doubled 42"));
}
