// Code without debug information (no_debug_info built with -g0 by gcc and clang -O0, where
// functions set up a frame, and gcc -O2, where they do not): ompdbg and gdb 13 run the same
// commands and must print the same lines. gdb places `break FUNC` past the frame set-up
// (amd64_analyze_prologue), ends `bt` at main found by its symbol (backtrace past-main off),
// and steps `until` one instruction forward over calls where there is no line to run to.
#include <catch2/catch.hpp>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

std::vector<std::string> nodebug_variants() {
    std::vector<std::string> v;
    for (const char* variant : {"gcc-O0", "clang-O0", "gcc-O2"}) {
        v.push_back(example_path(std::string("no_debug_info-nodebug-") + variant));
    }
    return v;
}

/// What the user sees from each debugger, compared. gdb -batch says nothing about the
/// missing DWARF when it loads the program; ompdbg does (cli_bad_input tests that line), so
/// it is left out of ompdbg's transcript here.
void compare_nodebug(const std::string& program, const std::vector<std::string>& cmds) {
    auto prog_lines = program_output(program);
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO("program: " << program);
    INFO("ompdbg stdout:\n" << ours.out << "\nompdbg stderr:\n" << ours.err);
    INFO("gdb stdout:\n" << theirs.out << "\ngdb stderr:\n" << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    std::vector<std::string> our_lines;
    for (auto& l : debugger_lines(ours.out, prog_lines)) {
        if (l.rfind("(No debugging symbols found in ", 0) != 0) {
            our_lines.push_back(l);
        }
    }
    CHECK(joined(our_lines) == joined(debugger_lines(theirs.out, prog_lines)));
}

}  // namespace

TEST_CASE("break, tbreak and advance FUNC without debug information stop past the frame set-up, as gdb",
          "[cli][gdb-compare][nodebug]") {
    auto program = GENERATE(from_range(nodebug_variants()));
    compare_nodebug(program, {"break sum_squares", "break square", "tbreak main", "info breakpoints", "run",
                              "advance square", "info breakpoints", "continue", "continue"});
}

TEST_CASE("bt without debug information ends at main, as gdb's backtrace past-main off", "[cli][gdb-compare][nodebug]") {
    auto program = GENERATE(from_range(nodebug_variants()));
    compare_nodebug(program, {"break square", "run", "bt", "finish", "bt", "up", "up", "kill"});
    // The user sees main as the last frame, not __libc_start_call_main below it.
    auto ours = ompdbg_cmds(program, {"break square", "run", "bt", "kill"});
    CHECK(count_lines_starting(ours.out, "#2  ") == 1);
    CHECK(count_lines_starting(ours.out, "#3  ") == 0);
    CHECK(ours.out.find("__libc_start_call_main") == std::string::npos);
}

TEST_CASE("until without line information steps one instruction over calls, and a loop's backward jump runs the loop",
          "[cli][gdb-compare][nodebug]") {
    auto program = GENERATE(from_range(nodebug_variants()));
    std::vector<std::string> cmds{"break sum_squares", "break square", "run", "until", "until"};
    for (int i = 0; i < 12; ++i) {
        cmds.push_back("until");
    }
    cmds.push_back("delete 2");
    for (int i = 0; i < 14; ++i) {
        cmds.push_back("until");
    }
    cmds.push_back("continue");
    compare_nodebug(program, cmds);
}

TEST_CASE("arithmetic on a function without debug information is an address: print square+7 and break *square+7, as gdb",
          "[cli][gdb-compare][nodebug]") {
    auto program = GENERATE(from_range(nodebug_variants()));
    compare_nodebug(program, {"print square", "print square+7", "print 7+square", "print square-1", "print &square",
                              "print *square", "print square == square", "print (long)square", "x/2i square+4",
                              "break *square+7", "info breakpoints", "run", "print $pc == square+7", "kill"});
}
