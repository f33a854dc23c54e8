// Signals: crashes stop with gdb's report and stack, `handle` changes what the debugger does
// (compared with gdb's tables), signals reach the program as gdb passes them, and
// `signal SIG` delivers one.

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::daily;

namespace {

/// The lines both debuggers print about the program's stops (not the program's output,
/// which both see, nor gdb's "Starting program"/"Continuing." chatter).
std::vector<std::string> stop_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind("Program ", 0) == 0 || l.rfind("#", 0) == 0 || l.rfind("[Inferior 1", 0) == 0 ||
            l.find(" in do_") != std::string::npos || l.rfind("do_", 0) == 0) {
            // Process ids differ between the two runs.
            auto p = l.find("(process ");
            if (p != std::string::npos) {
                l = l.substr(0, p) + l.substr(l.find(')', p) + 1);
            }
            // gdb sets LINES and COLUMNS in the program's environment: its stack starts lower.
            keep.push_back(std::regex_replace(l, std::regex("argv=0x[0-9a-f]+"), "argv=..."));
        }
    }
    return keep;
}

/// gdb's `handle` prints its table only when the command comes from a terminal (not in
/// -batch), so the tables are compared with an interactive gdb reading from /dev/null.
run_result gdb_interactive(const std::vector<std::string>& cmds) {
    std::vector<std::string> argv{"gdb", "-nx", "-q", "-ex", "set debuginfod enabled off"};
    auto ex = ex_args(cmds);
    argv.insert(argv.end(), ex.begin(), ex.end());
    argv.insert(argv.end(), {"-ex", "quit", example_path("crash")});
    return run(argv, run_options().timeout_after(60s));
}

/// The lines of `out` that start with `prefix` ("$" values, "#" frames).
std::vector<std::string> lines_starting(const std::string& out, const std::string& prefix) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind(prefix, 0) == 0) {
            keep.push_back(l);
        }
    }
    return keep;
}

std::vector<std::string> table_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind("SIG", 0) == 0 || l.rfind("EXC_", 0) == 0 || l.rfind("Signal ", 0) == 0 ||
            l.rfind("Use the", 0) == 0) {
            keep.push_back(l);
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("signals: each crash kind stops with gdb's report, the crash frame and bt, continue ends it",
          "[cli][signals]") {
    auto mode = GENERATE(std::string("segv"), std::string("bus"), std::string("fpe"), std::string("abrt"));
    CAPTURE(mode);
    auto program = example_path("crash");
    std::vector<std::string> cmds{"run", "bt", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // The program's own frames (inside libc gdb also shows inlined frames from libc's
    // separate debug info, so abort's libc frames are compared by the program's part).
    auto ours_lines = stop_lines(ours.out), gdb_lines = stop_lines(gdb.out);
    auto own = [](std::vector<std::string> v) {
        std::vector<std::string> keep;
        for (auto& l : v) {
            if (l.rfind("#", 0) == 0) {
                if (l.find("crash.c:") == std::string::npos) {
                    continue;
                }
                l = l.substr(l.find(' '));
            }
            keep.push_back(l);
        }
        return keep;
    };
    REQUIRE(gdb_lines.size() >= 4);
    CHECK(joined(own(ours_lines)) == joined(own(gdb_lines)));
    const char* names[][2] = {{"segv", "SIGSEGV, Segmentation fault"}, {"bus", "SIGBUS, Bus error"},
                              {"fpe", "SIGFPE, Arithmetic exception"}, {"abrt", "SIGABRT, Aborted"}};
    for (auto& n : names) {
        if (mode == n[0]) {
            CHECK(has_line(ours.out, std::string("Program received signal ") + n[1] + "."));
            CHECK(has_line(ours.out, std::string("Program terminated with signal ") + n[1] + "."));
        }
    }
    CHECK(ours.out.find("crash.c:" + std::to_string(example_line("crash.c", mode))) != std::string::npos);
}

TEST_CASE("signals: handle prints gdb's table rows and info signals lists gdb's table", "[cli][signals]") {
    std::vector<std::string> cmds{"handle SIGUSR1 nostop noprint", "handle SIGALRM stop", "handle 14 nopass",
                                  "handle SIGUSR1 SIGUSR2 nopass", "handle 10 nostop", "info signals SIGUSR1",
                                  "info signals 11", "handle SIGUSR2 print", "info signals"};
    auto ours = ompdbg_cmds(example_path("crash"), cmds);
    auto gdb = gdb_interactive(cmds);
    CAPTURE(ours.all(), gdb.all());
    auto expected = table_lines(gdb.out);
    REQUIRE(expected.size() > 100);
    CHECK(joined(table_lines(ours.out)) == joined(expected));
    CHECK(ours.exit_code == 0);
}

TEST_CASE("signals: handle with an unknown signal or a bad number is one clear error", "[cli][signals]") {
    auto ours = ompdbg_cmds(example_path("crash"), {"handle SIGFOO stop", "handle 20 stop", "echo alive\\n"});
    CAPTURE(ours.all());
    CHECK(ours.term_signal == 0);
    CHECK(ours.err.find("Unrecognized or ambiguous flag word: \"SIGFOO\".") != std::string::npos);
    CHECK(ours.err.find("Only signals 1-15 are valid as numeric signals.") != std::string::npos);
    CHECK(ours.out.find("alive") != std::string::npos);
    CHECK(ours.exit_code != 0);
}

TEST_CASE("signals: stop, print and pass decide what the user sees and what the program gets", "[cli][signals]") {
    auto program = example_path("crash");
    SECTION("by default SIGUSR1 stops, and continue passes it to the program's handler") {
        auto r = ompdbg_cmds(program, {"run", "continue"}, {"usr1"});
        CAPTURE(r.all());
        CHECK(has_line(r.out, "Program received signal SIGUSR1, User defined signal 1."));
        CHECK(has_line(r.out, "handler: got signal 10"));
        CHECK(has_line(r.out, "after raise"));
    }
    SECTION("nostop noprint: the program runs through and its handler runs") {
        auto r = ompdbg_cmds(program, {"handle SIGUSR1 nostop noprint", "run"}, {"usr1"});
        CAPTURE(r.all());
        CHECK(r.out.find("received signal") == std::string::npos);
        CHECK(has_line(r.out, "handler: got signal 10"));
        CHECK(r.out.find("exited normally]") != std::string::npos);
    }
    SECTION("nostop print: the signal is reported and still passed") {
        auto r = ompdbg_cmds(program, {"handle SIGUSR1 nostop print", "run"}, {"usr1"});
        CAPTURE(r.all());
        CHECK(has_line(r.out, "Program received signal SIGUSR1, User defined signal 1."));
        CHECK(has_line(r.out, "handler: got signal 10"));
        CHECK(r.out.find("exited normally]") != std::string::npos);
    }
    SECTION("nopass: the program never sees it") {
        auto r = ompdbg_cmds(program, {"handle SIGUSR1 nopass", "run", "continue"}, {"usr1"});
        CAPTURE(r.all());
        CHECK(has_line(r.out, "Program received signal SIGUSR1, User defined signal 1."));
        CHECK(r.out.find("handler: got signal") == std::string::npos);
        CHECK(has_line(r.out, "after raise"));
    }
    SECTION("signal 0 discards the signal, signal SIGUSR1 delivers one") {
        auto none = ompdbg_cmds(program, {"run", "signal 0"}, {"usr1"});
        CAPTURE(none.all());
        CHECK(has_line(none.out, "Continuing with no signal."));
        CHECK(none.out.find("handler: got signal") == std::string::npos);
        CHECK(has_line(none.out, "after raise"));
        // After the SIGUSR1 stop, `signal SIGUSR2`... the program has no SIGUSR2 handler:
        // it dies of it, as in gdb.
        auto other = ompdbg_cmds(program, {"run", "signal SIGUSR2"}, {"usr1"});
        auto gdb = gdb_cmds(program, {"run", "signal SIGUSR2"}, {"usr1"});
        CAPTURE(other.all(), gdb.all());
        CHECK(has_line(other.out, "Continuing with signal SIGUSR2."));
        CHECK(has_line(other.out, "Program terminated with signal SIGUSR2, User defined signal 2."));
        CHECK(has_line(gdb.out, "Program terminated with signal SIGUSR2, User defined signal 2."));
        auto usr1 = ompdbg_cmds(program, {"run", "signal SIGUSR1"}, {"usr1"});
        CHECK(has_line(usr1.out, "Continuing with signal SIGUSR1."));
        CHECK(has_line(usr1.out, "handler: got signal 10"));
    }
    SECTION("signal needs a live process") {
        auto r = ompdbg_cmds(program, {"signal SIGUSR1"}, {"usr1"});
        CHECK(r.err.find("The program is not being run.") != std::string::npos);
    }
}

TEST_CASE("signals: signal SIG at a breakpoint runs the handler, then reports the breakpoint again as gdb",
          "[cli][signals]") {
    auto program = example_path("crash");
    std::string at = "crash.c:" + std::to_string(example_line("crash.c", "raise"));
    std::vector<std::string> cmds{"break " + at, "run", "signal SIGUSR1", "info breakpoints", "continue", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"usr1"});
    auto gdb = gdb_cmds(program, cmds, {"usr1"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto reports = [](const std::string& out) {
        std::vector<std::string> keep;
        for (auto& l : lines_of(out)) {
            if (l.rfind("Breakpoint 1, ", 0) == 0 || l.rfind("Program received", 0) == 0 ||
                l.rfind("handler: ", 0) == 0 || l.rfind("after raise", 0) == 0 || l.find("already hit") != std::string::npos) {
                keep.push_back(std::regex_replace(l, std::regex("argv=0x[0-9a-f]+"), "argv=..."));
            }
        }
        return keep;
    };
    auto expected = reports(gdb.out);
    // Hit, handler, hit again, "already hit 2 times", the raise's SIGUSR1, its handler, the end.
    REQUIRE(expected.size() == 7);
    CHECK(joined(reports(ours.out)) == joined(expected));
    CHECK(ours.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("signals: $_siginfo of a SIGSEGV stop holds the signal and the faulting address, as gdb",
          "[cli][signals][siginfo]") {
    auto program = example_path("crash");
    std::vector<std::string> cmds{"print $_siginfo", "run", "print $_siginfo.si_signo", "print $_siginfo.si_code",
                                  "print $_siginfo._sifields._sigfault.si_addr", "print $_siginfo.si_errno"};
    auto ours = ompdbg_cmds(program, cmds, {"segv"});
    auto gdb = gdb_cmds(program, cmds, {"segv"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto values = [](const std::string& out) { return lines_starting(out, "$"); };
    // Before the program runs $_siginfo is void, as in gdb.
    REQUIRE(values(gdb.out).size() == 5);
    CHECK(joined(values(ours.out)) == joined(values(gdb.out)));
    CHECK(has_line(ours.out, "$1 = void"));
    CHECK(has_line(ours.out, "$2 = 11"));
    CHECK(has_line(ours.out, "$4 = (void *) 0x0"));
}

TEST_CASE("core: generate-core-file writes a core that ompdbg and gdb both read like the live process",
          "[cli][core][gcore]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto mode = GENERATE(std::string("segv"), std::string("threads"));
    CAPTURE(mode);
    std::string core = (dir.path() / "ours.core").string();
    auto live = ompdbg_cmds(program, {"run", "generate-core-file " + core, "bt", "info threads"}, {mode});
    CAPTURE(live.all());
    REQUIRE_FALSE(live.timed_out);
    REQUIRE(has_line(live.out, "Saved corefile " + core));
    // gdb reads it: the same signal, the same crash stack.
    std::vector<std::string> cmds{"bt", "info threads", "print global_counter", "x/2i $pc", "info sharedlibrary"};
    auto ours = ompdbg_core(program, core, cmds);
    auto gdb = gdb_core(program, core, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(gdb.out, "Program terminated with signal SIGSEGV, Segmentation fault."));
    CHECK(has_line(ours.out, "Program terminated with signal SIGSEGV, Segmentation fault."));
    if (mode == "segv") {
        CHECK(joined(nonempty_lines(ours.out)) == joined(gdb_core_lines(gdb.out)));
    } else {
        // Threads: the dumping thread first in both, 4 threads, libthread_db works on it.
        // (Frames deeper than the crash name clone3 by another alias in gdb.)
        CHECK(count_lines_starting(ours.out, "[New LWP ") == 4);
        CHECK(count_lines_starting(gdb.out, "[New LWP ") == 4);
        CHECK(has_line(gdb.out, "[Thread debugging using libthread_db enabled]"));
        auto current = [](const std::string& out) { return lines_starting(out, "[Current thread is 1 (Thread 0x"); };
        REQUIRE(current(gdb.out).size() == 1);
        CHECK(current(ours.out) == current(gdb.out));
        CHECK(gdb.out.find("#0  worker (arg=0x2) at ") != std::string::npos);
    }
    // The live session's stack is the core's.
    auto frames = [](const std::string& out) { return lines_starting(out, "#"); };
    // gdb prints frame #0 when it loads the core, then the backtrace.
    auto gdb_frames = frames(gdb.out);
    REQUIRE(gdb_frames.size() >= 3);
    gdb_frames.erase(gdb_frames.begin());
    auto live_frames = frames(live.out);
    REQUIRE(live_frames.size() == gdb_frames.size());
    CHECK(live_frames.front() == gdb_frames.front());
    if (mode == "segv") {
        CHECK(joined(live_frames) == joined(gdb_frames));
    }
}

TEST_CASE("core: generate-core-file without a process or into a bad path is one clear error", "[cli][core][gcore]") {
    auto program = example_path("crash");
    auto none = ompdbg_cmds(program, {"generate-core-file", "echo alive\\n"});
    CHECK(none.err.find("The program is not being run.") != std::string::npos);
    CHECK(none.out.find("alive") != std::string::npos);
    auto bad = ompdbg_cmds(program, {"run", "gcore /nonexistent-dir/core", "echo alive\\n"}, {"segv"});
    CAPTURE(bad.all());
    CHECK(bad.err.find("Failed to open '/nonexistent-dir/core' for output.") != std::string::npos);
    CHECK(bad.out.find("alive") != std::string::npos);
    CHECK(bad.term_signal == 0);
}
