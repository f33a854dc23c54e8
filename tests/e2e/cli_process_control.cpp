// Process control through the real ompdbg binary at an interactive prompt (stdin and stdout
// on pipes): Ctrl-C while the target runs, attach/inspect/detach of a running program,
// attaching to a program another tracer holds, the target killed with SIGKILL from
// outside while stopped and while running. Every wait is bounded; the test synchronises on
// what the program and the debugger print.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <regex>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

// ompdbg built with AddressSanitizer is several times slower: generous but bounded.
constexpr auto step_timeout = 60s;

const std::regex prompt_re(R"(\(ompdbg\) $)");

/// An interactive `ompdbg ARGS...` on pipes.
struct debugger {
    background_process proc;

    explicit debugger(std::vector<std::string> args) : proc(argv_for(std::move(args))) {}

    static std::vector<std::string> argv_for(std::vector<std::string> args) {
        args.insert(args.begin(), ompdbg_binary);
        return args;
    }

    /// Sends one command line; returns everything printed until the next prompt.
    std::optional<std::string> command(const std::string& line) {
        proc.write_stdin(line + "\n");
        return until_prompt();
    }
    std::optional<std::string> until_prompt() {
        auto out = proc.wait_for_output(prompt_re, step_timeout);
        return out;
    }
};

/// The pids of the children of `pid` (from /proc/PID/task/PID/children).
std::vector<pid_t> children_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    std::vector<pid_t> out;
    pid_t c;
    while (in >> c) {
        out.push_back(c);
    }
    return out;
}

/// The "counter N" numbers among `lines`, in order.
std::vector<long> counter_values(const std::vector<std::string>& lines) {
    static const std::regex re(R"(^counter (\d+)$)");
    std::vector<long> out;
    std::smatch m;
    for (const auto& l : lines) {
        if (std::regex_match(l, m, re)) {
            out.push_back(std::stol(m[1]));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("Ctrl-C stops the running target and the prompt answers the next command", "[cli]") {
    debugger dbg({example_path("counter")});
    REQUIRE(dbg.until_prompt());
    dbg.proc.write_stdin("run\n");
    // The program runs: it prints its lines through the debugger's terminal (our pipe).
    REQUIRE(dbg.proc.wait_for_line(std::regex("^counter 3$"), step_timeout));
    dbg.proc.send_signal(SIGINT);   // what the terminal does on Ctrl-C
    // The debugger's own output is block-buffered on a pipe: match on the text, not chunks.
    auto stop = dbg.proc.wait_for_output(std::regex(R"(Program received signal SIGINT, Interrupt\.[\s\S]*\(ompdbg\) $)"),
                                         step_timeout);
    REQUIRE(stop);
    // Stopped: the same counter value answers twice, and the program prints nothing more.
    dbg.proc.write_stdin("print current\n");
    auto p1 = dbg.proc.wait_for_output(std::regex(R"(\$1 = \d+\n\(ompdbg\) $)"), step_timeout);
    REQUIRE(p1);
    std::smatch m;
    REQUIRE(std::regex_search(*p1, m, std::regex(R"(\$1 = (\d+))")));
    long value = std::stol(m[1]);
    CHECK(value >= 3);
    dbg.proc.write_stdin("print current\n");
    auto p2 = dbg.proc.wait_for_output(std::regex(R"(\$2 = \d+\n\(ompdbg\) $)"), step_timeout);
    REQUIRE(p2);
    CHECK(p2->find("$2 = " + std::to_string(value)) != std::string::npos);
    // It goes on after `continue`, from where it was.
    dbg.proc.write_stdin("continue\n");
    auto next = dbg.proc.wait_for_line(std::regex("^counter " + std::to_string(value + 2) + "$"), step_timeout);
    CHECK(next);
    dbg.proc.send_signal(SIGINT);
    REQUIRE(dbg.until_prompt());
    dbg.proc.close_stdin();   // EOF: quits and kills the program
    auto end = dbg.proc.wait_exit(step_timeout);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
    // No line was skipped or repeated while it was interrupted.
    auto values = counter_values(dbg.proc.consumed_lines());
    for (std::size_t i = 1; i < values.size(); ++i) {
        CHECK(values[i] == values[i - 1] + 1);
    }
}

TEST_CASE("attach, inspect and detach: the counter keeps printing the same sequence", "[cli]") {
    background_process prog({example_path("counter")});
    REQUIRE(prog.wait_for_line(std::regex("^counter 5$"), step_timeout));
    auto r = ompdbg_batch({"-ex", "print current", "-ex", "bt", "-ex", "info threads", "-ex", "detach", "attach",
                           std::to_string(prog.pid())},
                          run_options().timeout_after(120s));
    INFO(r.all());
    REQUIRE(r.ok());
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(\$1 = (\d+))")));
    long seen = std::stol(m[1]);
    CHECK(seen >= 5);
    // The backtrace reaches main through the program's own functions.
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +(0x[0-9a-f]+ in )?main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + std::to_string(prog.pid()) + ") detached]"));
    // Not traced any more, and the sequence goes on: every number once, in order.
    auto status = run({"grep", "TracerPid", "/proc/" + std::to_string(prog.pid()) + "/status"});
    CHECK(status.out == "TracerPid:\t0\n");
    for (int i = 0; i < 20; ++i) {
        REQUIRE(prog.next_line(step_timeout));
    }
    auto values = counter_values(prog.consumed_lines());
    REQUIRE(values.size() >= 26);
    for (std::size_t i = 1; i < values.size(); ++i) {
        CHECK(values[i] == values[i - 1] + 1);
    }
    // What the debugger read is what the program was printing at that moment.
    CHECK(std::find(values.begin(), values.end(), seen) != values.end());
}

TEST_CASE("attaching to a program another tracer holds is one clear line, the prompt goes on", "[cli]") {
    // The first tracer: an ompdbg that runs the counter.
    debugger holder({example_path("counter")});
    REQUIRE(holder.until_prompt());
    holder.proc.write_stdin("run\n");
    REQUIRE(holder.proc.wait_for_line(std::regex("^counter 2$"), step_timeout));
    auto kids = children_of(holder.proc.pid());
    REQUIRE(kids.size() == 1);
    pid_t target = kids.front();

    auto r = run({ompdbg_binary}, run_options()
                                      .input("attach " + std::to_string(target) + "\necho still here\\n\n")
                                      .timeout_after(60s));
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(r.err == "ptrace: Operation not permitted.\n");
    CHECK(r.out.find("still here") != std::string::npos);
    // The first tracer still owns it.
    auto status = run({"grep", "TracerPid", "/proc/" + std::to_string(target) + "/status"});
    CHECK(status.out == "TracerPid:\t" + std::to_string(holder.proc.pid()) + "\n");
}

TEST_CASE("the target killed with SIGKILL while stopped: continue says so, the prompt goes on", "[cli]") {
    debugger dbg({example_path("counter")});
    REQUIRE(dbg.until_prompt());
    REQUIRE(dbg.command("break print_counter"));
    auto hit = dbg.command("run");
    REQUIRE(hit);
    INFO(*hit);
    REQUIRE(hit->find("Breakpoint 1, print_counter (n=0)") != std::string::npos);
    auto kids = children_of(dbg.proc.pid());
    REQUIRE(kids.size() == 1);
    REQUIRE(::kill(kids.front(), SIGKILL) == 0);
    auto cont = dbg.command("continue");
    REQUIRE(cont);
    INFO(*cont);
    CHECK(cont->find("Program terminated with signal SIGKILL, Killed.") != std::string::npos);
    CHECK(cont->find("The program no longer exists.") != std::string::npos);
    auto bt = dbg.command("bt");
    REQUIRE(bt);
    CHECK(dbg.proc.stderr_text().find("No stack.") != std::string::npos);
    auto echo = dbg.command("echo alive\\n");
    REQUIRE(echo);
    CHECK(echo->find("alive") != std::string::npos);
    dbg.proc.close_stdin();
    auto end = dbg.proc.wait_exit(step_timeout);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}

TEST_CASE("the target killed with SIGKILL while running: the stop is reported, the prompt goes on", "[cli]") {
    debugger dbg({example_path("counter")});
    REQUIRE(dbg.until_prompt());
    dbg.proc.write_stdin("run\n");
    REQUIRE(dbg.proc.wait_for_line(std::regex("^counter 2$"), step_timeout));
    auto kids = children_of(dbg.proc.pid());
    REQUIRE(kids.size() == 1);
    REQUIRE(::kill(kids.front(), SIGKILL) == 0);
    auto stop = dbg.until_prompt();
    REQUIRE(stop);
    INFO(*stop);
    CHECK(stop->find("Program terminated with signal SIGKILL, Killed.") != std::string::npos);
    CHECK(stop->find("The program no longer exists.") != std::string::npos);
    auto cont = dbg.command("continue");
    REQUIRE(cont);
    CHECK(dbg.proc.stderr_text().find("The program is not being run.") != std::string::npos);
    // The program can be run again from the same prompt.
    REQUIRE(dbg.command("break print_counter"));
    auto hit = dbg.command("run");
    REQUIRE(hit);
    CHECK(hit->find("Breakpoint 1, print_counter (n=0)") != std::string::npos);
    dbg.proc.close_stdin();
    auto end = dbg.proc.wait_exit(step_timeout);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}
