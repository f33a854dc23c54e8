// Forks, vforks and execs of a process on another host (issue 18), through the real
// gdbserver on a simulated host (tests/cluster/, support/cluster.hpp): `catch fork`,
// `catch vfork` and `catch exec` stop as gdb's do through the same agent, a fork child is
// let go with "[Detaching after fork from child process N]" and runs to its end unharmed
// (a breakpoint of the parent in its code: no int3 is left in its memory), an exec reloads
// the program and its breakpoints; `set follow-fork-mode child` and `set detach-on-fork off`
// make the child an inferior of the same agent, as gdb does through it. Each test removes
// the hosts it made.
#include <catch2/catch.hpp>

#include <regex>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "remote_counter.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

constexpr auto step_timeout = 60s;

/// ompdbg and gdb on the same script: the agent of node1 runs `program` (examples/procs).
struct both_runs {
    run_result ours, theirs;
};

both_runs run_both(const simulated_cluster& cluster, const std::vector<std::string>& cmds,
                   const std::string& program = example_path("procs")) {
    auto args = ex_args(cmds);
    args.push_back(program);
    both_runs r;
    r.ours = ompdbg_batch(args, cluster.options(run_options().timeout_after(step_timeout)));
    // gdb runs nothing over extended-remote without `set remote exec-file`.
    std::vector<std::string> gdb_args{"-ex", "set sysroot /", "-ex", "set remote exec-file " + program};
    gdb_args.insert(gdb_args.end(), args.begin(), args.end());
    r.theirs = gdb_batch(gdb_args, cluster.options(run_options().timeout_after(step_timeout)));
    return r;
}

/// A `shell` command that returns once the oldest process named `name` on node1 has ended
/// (tail --pid waits for it; nothing when none is left): the session waits for a detached
/// parent to print its last line before the agent, whose output it writes to, goes away.
std::string wait_for_exit_on_node1(const simulated_cluster& cluster, const std::string& name) {
    return "shell " + cluster.rsh() + " node1 'tail --pid=$(pgrep -o -x " + name + ") -f /dev/null 2>/dev/null'";
}

/// The debugger's reports of the run (catchpoints, breakpoints, detaches, the exec, the
/// end), pids and addresses masked; a catchpoint's frame is cut after the function (gdb
/// names a vfork by another alias of the same code).
std::string reports(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : grep(masked(out), R"(^(Catchpoint [0-9]+ \(|Breakpoint [0-9]+, |\[Detaching |\[Inferior |process P is executing))")) {
        if (l.rfind("Catchpoint", 0) == 0 && l.find("), ") != std::string::npos) {
            l = l.substr(0, l.find("), ") + 3);
        }
        keep.push_back(std::regex_replace(l, std::regex(R"(\(v?forked process \d+\))"), "(forked process C)"));
    }
    return joined(keep);
}

/// The lines about inferiors (fork notes, `info inferiors`, switches, breakpoint hits,
/// exits), pids masked: those whose shape gdb's has too. (gdb names a remote thread
/// "Thread P.T" where ompdbg names it as locally, "Thread 0x... (LWP T)": the notes of the
/// attach to the child and the thread switches are left out.)
std::string inferior_reports(const std::string& out) {
    static const std::vector<std::string> prefixes{"[New inferior", "[Detaching after", "[Detaching vfork",
                                                   "[Inferior ", "  Num  ", "* ", "  1 ", "  2 ", "\tis vfork",
                                                   "[Switching to inferior", "Thread 1.1 ", "Thread 1 \"", "Thread 2.1 "};
    std::vector<std::string> keep;
    for (auto l : lines_of(out)) {
        bool wanted = false;
        for (const auto& p : prefixes) {
            wanted = wanted || l.rfind(p, 0) == 0;
        }
        if (!wanted) {
            continue;
        }
        // A table cell is padded to a fixed width: a shorter pid has more spaces after it.
        l = std::regex_replace(l, std::regex(R"(process \d+ {2,})"), "process N  ");
        l = std::regex_replace(l, std::regex(R"(process \d+)"), "process N");
        l = std::regex_replace(l, std::regex("0x[0-9a-f]+"), "0xADDR");
        // gdb forgets an exited inferior 2 when inferior 1 resumes, and then names the
        // parent's thread "Thread 1"; ompdbg lists it until `info inferiors` ("Thread 1.1").
        l = std::regex_replace(l, std::regex(R"(^Thread 1\.1 ")"), "Thread 1 \"");
        // gdb numbers a breakpoint's location per inferior ("Breakpoint 1.2").
        keep.push_back(std::regex_replace(l, std::regex(R"(Breakpoint (\d+)\.\d+,)"), "Breakpoint $1,"));
    }
    return joined(keep);
}

}  // namespace

TEST_CASE("catch fork and catch vfork on a process of another host stop in the parent as gdb's do, and the child, "
          "let go, runs to its end without the parent's breakpoints",
          "[cli][remote][catch]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    auto caught = GENERATE(true, false);
    CAPTURE(mode, caught);
    simulated_cluster cluster({"node1"});
    // A breakpoint in the child's code: the child must run through it (not stop, not die
    // of SIGTRAP on a leftover int3), and so exit 7 as the parent then says.
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "break in_child"};
    if (caught) {
        cmds.push_back("catch " + mode);
    }
    cmds.push_back("run " + mode);
    if (caught) {
        cmds.push_back("continue");
    }
    auto r = run_both(cluster, cmds);
    INFO("ompdbg:\n" << r.ours.out << r.ours.err << "\ngdb:\n" << r.theirs.out << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.ok());
    const std::string detached = "[Detaching after " + mode + " from child process ";
    CHECK(reports(r.theirs.out).find(detached) != std::string::npos);
    CHECK(reports(r.ours.out) == reports(r.theirs.out));
    // The child that was announced printed its own pid and exited 7 (gdbserver passes the
    // program's output to its stderr).
    std::smatch m;
    REQUIRE(std::regex_search(r.ours.out, m, std::regex(R"(\[Detaching after v?fork from child process (\d+)\])")));
    CHECK(has_line(r.ours.err, "child " + m[1].str()));
    CHECK(has_line(r.ours.err, "parent: child exited 7"));
    CHECK(r.ours.out.find("Breakpoint 1, ") == std::string::npos);
    CHECK(std::regex_search(r.ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
    if (caught) {
        CHECK(r.ours.out.find("(" + std::string(mode == "fork" ? "forked" : "vforked") + " process " + m[1].str() +
                              "), ") != std::string::npos);
    }
}

TEST_CASE("catch exec on a process of another host: the new program is loaded, its breakpoints planted again, as gdb "
          "does",
          "[cli][remote][catch]") {
    simulated_cluster cluster({"node1"});
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"),
                                  "catch exec",
                                  "break main",
                                  "run exec",
                                  "continue",
                                  "continue",
                                  "info breakpoints",
                                  "continue"};
    auto r = run_both(cluster, cmds);
    INFO("ompdbg:\n" << r.ours.out << r.ours.err << "\ngdb:\n" << r.theirs.out << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.ok());
    const std::string program = example_path("procs");
    // main's breakpoint hits before the exec and again in the new image, after the exec
    // is reported at the new program's first instruction (in the dynamic loader).
    CHECK(reports(r.theirs.out).find("Catchpoint 1 (exec'd " + program + "), ") != std::string::npos);
    CHECK(reports(r.ours.out) == reports(r.theirs.out));
    CHECK(r.ours.out.find(" in _start () from ") != std::string::npos);
    CHECK(std::regex_search(r.ours.out, std::regex("Breakpoint 2, main \\(argc=2, argv=0x[0-9a-f]+\\) at .*procs.c")));
    CHECK(r.ours.out.find("catchpoint already hit 1 time") != std::string::npos);
    CHECK(has_line(r.ours.err, "hello from write"));
}

TEST_CASE("follow-fork-mode child on a process of another host: the child is inferior 2, its breakpoint hits, "
          "the parent is detached and runs to its end, as gdb through the same agent",
          "[cli][remote][fork]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    simulated_cluster cluster({"node1"});
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "set follow-fork-mode child",
                                  "break in_child", "run " + mode, "info inferiors", "bt", "continue",
                                  // The detached parent reports the child's exit once it is
                                  // gone: the session waits for it before the agent closes.
                                  wait_for_exit_on_node1(cluster, "procs")};
    auto r = run_both(cluster, cmds);
    INFO("ompdbg:\n" << r.ours.out << r.ours.err << "\ngdb:\n" << r.theirs.out << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.ok());
    const std::string expected = inferior_reports(r.theirs.out);
    REQUIRE(expected.find("[New inferior 2 (process N)]") != std::string::npos);
    REQUIRE(expected.find("Thread 2.1 \"procs\" hit Breakpoint 1, in_child () at ") != std::string::npos);
    CHECK(inferior_reports(r.ours.out) == expected);
    std::smatch m;
    REQUIRE(std::regex_search(r.ours.out, m, std::regex(R"(\[New inferior 2 \(process (\d+)\)\])")));
    CHECK(r.ours.out.find("[Attaching after Thread ") != std::string::npos);
    CHECK(r.ours.out.find(" " + mode + " to child process " + m[1].str() + "]") != std::string::npos);
    // The child's stack is the child's; it printed its own pid, and the parent, let go
    // (a fork's at once, a vfork's once the child exited), saw it exit with 7.
    CHECK(r.ours.out.find("#0  in_child () at ") != std::string::npos);
    CHECK(has_line(r.ours.err, "child " + m[1].str()));
    CHECK(has_line(r.ours.err, "parent: child exited 7"));
    CHECK(std::regex_search(r.ours.out, std::regex(R"(\[Inferior 2 \(process \d+\) exited with code 07\])")));
}

TEST_CASE("detach-on-fork off on a process of another host: both processes are inferiors of the agent, each "
          "continued on its own, as gdb through the same agent",
          "[cli][remote][fork]") {
    simulated_cluster cluster({"node1"});
    // The parent stops before its waitpid (it would wait there for the stopped child for
    // ever); the child's exit then sends it a SIGCHLD while it sits on that breakpoint.
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"),
                                  "set detach-on-fork off",
                                  "break in_child",
                                  "break " + example_location("procs.c", "parent_wait"),
                                  "run fork",
                                  "info inferiors",
                                  "inferior 2",
                                  "continue",
                                  "info inferiors",
                                  "continue",
                                  "inferior 1",
                                  "continue",
                                  "info inferiors"};
    auto r = run_both(cluster, cmds);
    INFO("ompdbg:\n" << r.ours.out << r.ours.err << "\ngdb:\n" << r.theirs.out << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.ok());
    const std::string expected = inferior_reports(r.theirs.out);
    REQUIRE(expected.find("[Inferior 2 (process N) exited with code 07]") != std::string::npos);
    REQUIRE(expected.find("[Inferior 1 (process N) exited normally]") != std::string::npos);
    CHECK(inferior_reports(r.ours.out) == expected);
    std::smatch m;
    REQUIRE(std::regex_search(r.ours.out, m, std::regex(R"(\[New inferior 2 \(process (\d+)\)\])")));
    CHECK(has_line(r.ours.err, "child " + m[1].str()));
    CHECK(has_line(r.ours.err, "parent: child exited 7"));
}

TEST_CASE("a followed vfork child of a process of another host: its breakpoints leave the memory it shared with the "
          "parent when it exits or execs, and a parent kept by detach-on-fork off hits its own, as gdb",
          "[cli][remote][fork]") {
    auto how = GENERATE(std::string("exit"), std::string("exec"), std::string("kept"));
    CAPTURE(how);
    simulated_cluster cluster({"node1"});
    // examples/vfork_follow: the child adds 5 to `shared` in child_step and exits 7 (or
    // execs the program, which exits 3); the parent reads `shared` through child_step(0),
    // where a breakpoint of the child left in its memory would kill it with SIGTRAP.
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "set follow-fork-mode child",
                                  "break child_step", "run " + std::string(how == "exec" ? "exec" : "exit"),
                                  "info inferiors", "continue"};
    if (how == "kept") {
        cmds.insert(cmds.begin() + 1, "set detach-on-fork off");
        cmds.insert(cmds.end(), {"info inferiors", "inferior 1", "continue", "continue"});
    } else {
        cmds.push_back(wait_for_exit_on_node1(cluster, "vfork_follow"));   // the detached parent's last line
    }
    auto r = run_both(cluster, cmds, example_path("vfork_follow"));
    INFO("ompdbg:\n" << r.ours.out << r.ours.err << "\ngdb:\n" << r.theirs.out << r.theirs.err);
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(r.ours.ok());
    const std::string expected = inferior_reports(r.theirs.out);
    REQUIRE(expected.find("\tis vfork parent of inferior 2") != std::string::npos);
    CHECK(inferior_reports(r.ours.out) == expected);
    CHECK(r.ours.out.find("hit Breakpoint 1, child_step (x=5)") != std::string::npos);
    const std::string end = how == "exec" ? "3" : "7";
    CHECK(has_line(r.ours.err, "parent: child exited " + end + ", shared 5"));
    if (how == "kept") {
        // The parent hit child_step itself (x=0) once the child had exited.
        CHECK(r.ours.out.find("hit Breakpoint 1, child_step (x=0)") != std::string::npos);
        CHECK(std::regex_search(r.ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
    }
}
