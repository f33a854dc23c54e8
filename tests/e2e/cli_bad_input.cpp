// Bad input: each gives one clear line, never a crash or a hang, and the prompt stays
// usable.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <regex>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// The debugger's prompt, then a command's output, in an interactive session on stdin.
run_result interactive(const std::vector<std::string>& args, const std::string& input) {
    std::vector<std::string> argv{ompdbg_binary};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, run_options().input(input).timeout_after(60s));
}

}  // namespace

TEST_CASE("run /nonexistent says so in one line and exits non-zero", "[cli]") {
    auto r = ompdbg_batch({"run", "/nonexistent"}, run_options().timeout_after(20s));
    INFO(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("/nonexistent: No such file or directory.") != std::string::npos);
}

TEST_CASE("run /etc/passwd says it is not an executable format", "[cli]") {
    auto r = ompdbg_batch({"run", "/etc/passwd"}, run_options().timeout_after(20s));
    INFO(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("not in executable format: file format not recognized") != std::string::npos);
}

TEST_CASE("after a bad program the prompt is still usable", "[cli]") {
    auto r = interactive({"/nonexistent"}, "help break\necho still here\n");
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("/nonexistent: No such file or directory.") != std::string::npos);
    CHECK(r.out.find("Set breakpoint at specified location.") != std::string::npos);
    CHECK(r.out.find("still here") != std::string::npos);
    CHECK(r.out.find("(ompdbg) ") != std::string::npos);
}

TEST_CASE("a stripped binary runs, says it has no debugging symbols, and breaks on a libc function", "[cli]") {
    std::string stripped = std::string(examples_dir) + "/structs-stripped";
    // printf is in libc (a pending breakpoint until libc is mapped); main calls it.
    auto r = ompdbg_batch({"-ex", "break printf", "-ex", "run", "-ex", "kill", stripped},
                          run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.out.find("(No debugging symbols found in " + stripped + ")") != std::string::npos);
    CHECK(r.out.find("Breakpoint 1, ") != std::string::npos);
    CHECK(r.out.find("printf (format=") != std::string::npos);
}

TEST_CASE("a stripped binary runs to its end", "[cli]") {
    std::string stripped = std::string(examples_dir) + "/structs-stripped";
    auto r = ompdbg_batch({"run", stripped}, run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.out.find("message = changed") != std::string::npos);
    CHECK(r.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("break nosuchfunc offers a pending breakpoint", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"break nosuchfunc", "info breakpoints", "run"});
    INFO(r.all());
    CHECK(r.term_signal == 0);
    CHECK(has_line(r.out, "Function \"nosuchfunc\" not defined."));
    CHECK(has_line(r.out, "Make breakpoint pending on future shared library load? (y or [n]) [answered Y; input not from terminal]"));
    CHECK(has_line(r.out, "Breakpoint 1 (nosuchfunc) pending."));
    // gdb's row: the Address column is 10 wide while no breakpoint has an address.
    CHECK(has_line(r.out, "1       breakpoint     keep y   <PENDING>  nosuchfunc"));
    CHECK(r.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("attach 999999 says there is no such process", "[cli]") {
    auto r = ompdbg_batch({"attach", "999999"}, run_options().timeout_after(20s));
    INFO(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code != 0);
    CHECK(has_line(r.err, "ptrace: No such process."));
}

TEST_CASE("thread 99 is an unknown thread", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"break factorial", "run", "thread 99", "thread 1"});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(has_line(r.err, "Unknown thread 99."));
    CHECK(has_line(r.err, "ompdbg: command 'thread 99' failed"));
    CHECK(r.out.find("[Switching to thread 1 (") != std::string::npos);
}

TEST_CASE("process control without a process says the program is not being run", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"continue", "next", "step", "finish", "kill", "detach"});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(r.term_signal == 0);
    CHECK(count_lines_starting(r.err, "The program is not being run.") == 6);
}

TEST_CASE("truncated and corrupted copies of an example never crash the debugger", "[cli]") {
    auto name = GENERATE(as<std::string>{}, "structs-truncated-1000", "structs-truncated-half", "structs-corrupt-shdr",
                         "structs-corrupt-dwarf");
    std::string path = std::string(examples_dir) + "/" + name;
    auto r = ompdbg_cmds(path, {"break main", "run", "info breakpoints"});
    INFO(path << "\n" << r.all());
    CHECK_FALSE(r.timed_out);
    CHECK(r.term_signal == 0);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    if (r.exit_code != 0) {
        CHECK_FALSE(r.err.empty());
    }
}

TEST_CASE("EOF on stdin quits and kills the launched program", "[cli]") {
    auto r = interactive({example_path("counter")}, "break print_counter\nrun\n");
    INFO(r.all());
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Breakpoint 1, print_counter (n=0)") != std::string::npos);
}

TEST_CASE("an empty line repeats next", "[cli]") {
    int body = example_line("structs.c", "area_of_body");
    auto r = interactive({example_path("structs")}, "break area_of\nrun\nnext\n\n\n");
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(source_line("structs.c", body + 1)) != std::string::npos);
    CHECK(r.out.find(source_line("structs.c", body + 2)) != std::string::npos);
    CHECK(r.out.find(source_line("structs.c", body + 3)) != std::string::npos);
}
