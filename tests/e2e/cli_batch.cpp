// The command line and batch mode: options, exit status, failing commands named on
// stderr, commands bodies, JSON lines.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("ompdbg --version and --help", "[cli]") {
    auto v = run({ompdbg_binary, "--version"}, run_options().timeout_after(20s));
    CHECK(v.ok());
    CHECK(v.out.rfind("ompdbg ", 0) == 0);
    auto h = run({ompdbg_binary, "--help"}, run_options().timeout_after(20s));
    CHECK(h.ok());
    CHECK(h.out.find("-x") != std::string::npos);
    CHECK(h.out.find("run PROG [ARGS...]") != std::string::npos);
    CHECK(h.out.find("attach PID") != std::string::npos);
}

TEST_CASE("ompdbg --args PROG ARGS gives the program its arguments, as gdb does", "[cli]") {
    // The same session in both debuggers: the program's argument is "vfork".
    std::vector<std::string> tail{"-ex", "break spawn", "-ex", "run", "-ex", "info args", "-ex", "show args",
                                  "--args", example_path("fork_steps"), "vfork"};
    std::vector<std::string> ours{ompdbg_binary, "--batch"}, theirs{"gdb", "-nx", "-batch"};
    ours.insert(ours.end(), tail.begin(), tail.end());
    theirs.insert(theirs.end(), tail.begin(), tail.end());
    auto r = run(ours, run_options().timeout_after(60s));
    auto g = run(theirs, run_options().timeout_after(60s));
    INFO(r.all() << "\ngdb:\n" << g.all());
    CHECK(r.ok());
    for (const char* l : {"use_vfork = 1", "Argument list to give program being debugged when it is started is \"vfork\"."}) {
        CHECK(has_line(g.out, l));
        CHECK(has_line(r.out, l));
    }
    // Nothing after --args is an option of ours, even a word that is one of our verbs.
    auto none = run({ompdbg_binary, "--batch", "--args"}, run_options().timeout_after(20s));
    CHECK(none.exit_code == 2);
    CHECK(none.err.find("--args needs a program") != std::string::npos);
    auto verb = run({ompdbg_binary, "--batch", "--args", "core"}, run_options().timeout_after(20s));
    CHECK(verb.err.find("core: No such file or directory.") != std::string::npos);
}

TEST_CASE("batch mode exits 0 when every command succeeded", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"break factorial", "run", "continue", "kill"});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.err.find("failed") == std::string::npos);
}

TEST_CASE("an unknown command is reported as gdb does and fails batch mode", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"foo", "break main"});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(has_line(r.err, "Undefined command: \"foo\".  Try \"help\"."));
    CHECK(has_line(r.err, "ompdbg: command 'foo' failed"));
    // The next command still ran.
    CHECK(r.out.find("Breakpoint 1 at ") != std::string::npos);
}

TEST_CASE("ompdbg run PROG starts the program after the -ex commands when none ran it", "[cli]") {
    auto r = ompdbg_batch({"-ex", "break factorial", "run", example_path("structs")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.ok());
    CHECK(has_line(r.out, "Breakpoint 1, factorial (n=5) at " + std::string(examples_source_dir) + "/structs.c:" +
                              std::to_string(example_line("structs.c", "factorial_base") - 1)));
}

TEST_CASE("arguments after run PROG belong to the program", "[cli]") {
    // factorial(4 + argc): three arguments make argc 4, so n = 8.
    auto r = ompdbg_batch({"-ex", "break factorial", "-ex", "run", "run", example_path("structs"), "-ex", "b", "c"},
                          run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.out.find("Breakpoint 1, factorial (n=8)") != std::string::npos);
}

TEST_CASE("batch mode: -x FILE runs its commands, and a commands body with silent and continue", "[cli]") {
    std::string script = std::string(examples_dir) + "/../cli_commands_test.gdb";
    {
        std::ofstream f(script);
        f << "break factorial\ncommands 1\nsilent\necho hit\\n\ncontinue\nend\nrun\n";   // gdb: echo adds no newline
    }
    auto r = ompdbg_batch({"-x", script, example_path("structs")}, run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.ok());
    CHECK(count_lines_starting(r.out, "hit") == 5);   // factorial(5) .. factorial(1)
    CHECK(r.out.find("Breakpoint 1,") == std::string::npos);
    CHECK(r.out.find("exited normally") != std::string::npos);
}

TEST_CASE("a commands body can follow in the next -ex arguments", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"),
                         {"break factorial", "commands", "silent", "echo body ran\\n", "continue", "end", "run"});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(count_lines_starting(r.out, "body ran") == 5);
}

TEST_CASE("batch mode: --json prints one valid JSON object per line", "[cli]") {
    auto r = ompdbg_batch({"--json", "-ex", "break factorial", "-ex", "run", "-ex", "info breakpoints",
                           example_path("structs")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    CHECK(r.ok());
    auto prog = program_output(example_path("structs"));
    int objects = 0;
    for (auto& l : lines_of(r.out)) {
        if (std::find(prog.begin(), prog.end(), l) != prog.end()) {
            continue;   // the program's own output shares stdout
        }
        INFO(l);
        CHECK_NOTHROW(nlohmann::json::parse(l));
        ++objects;
    }
    CHECK(objects >= 4);
}

TEST_CASE("core with a missing core file says so in one line", "[cli]") {
    auto r = ompdbg_batch({"core", example_path("structs"), "/nonexistent-core"}, run_options().timeout_after(20s));
    CHECK(r.exit_code != 0);
    CHECK(r.term_signal == 0);
    CHECK(r.err.find("/nonexistent-core: No such file or directory.") != std::string::npos);
}

TEST_CASE("help lists commands and help CMD describes one", "[cli]") {
    auto r = ompdbg_cmds(example_path("structs"), {"help", "help break", "help info"});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.out.find("break, b") != std::string::npos);
    CHECK(r.out.find("Set breakpoint at specified location.") != std::string::npos);
    CHECK(r.out.find("info breakpoints") != std::string::npos);
}
