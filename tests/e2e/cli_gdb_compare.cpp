// ompdbg and gdb 13 run the same commands on the same example binary: the lines the
// debugger prints (stop reports, source lines, breakpoint tables, finish values) must be
// the same. Every gcc/clang × DWARF 4/5 build of the example.
#include <catch2/catch.hpp>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("break FUNC, run, continue and info breakpoints print what gdb prints", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"break factorial", "info breakpoints", "run", "continue", "info breakpoints",
                               "delete", "continue"});
}

TEST_CASE("break FILE:LINE and tbreak LINE report as gdb does, and the program exits normally", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    int body = example_line("structs.c", "area_of_body");
    int loop = example_line("structs.c", "loop_body");
    REQUIRE(body > 0);
    compare_with_gdb(program, {"break structs.c:" + std::to_string(body), "tbreak " + std::to_string(loop), "run",
                               "continue", "info breakpoints", "continue"});
}

TEST_CASE("next, step, finish, until, stepi and nexti print what gdb prints", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"break area_of", "run", "next", "next", "finish", "next", "step", "step", "finish",
                               "until", "stepi", "stepi", "nexti", "next", "next", "next"});
}

TEST_CASE("break ... if COND and condition stop only when the condition holds", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"break factorial if n == 2", "run", "info breakpoints", "condition 1",
                               "continue", "info breakpoints", "delete 1", "continue"});
    // The condition ran in the target, through the agent's jump pad (issue 21).
    auto ours = ompdbg_cmds(program, {"break factorial if n == 2", "run", "info breakpoints"});
    CHECK(has_line(ours.out, "\tstop only if n == 2 (target evaluation)"));
}

TEST_CASE("ignore counts and disable/enable behave as in gdb", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"break factorial", "break sum_list", "ignore 1 3", "disable 2", "run",
                               "info breakpoints", "enable 2", "continue", "continue", "info breakpoints", "kill"});
}

TEST_CASE("a breakpoint in a recursive function and finish from a deeper level", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    int base = example_line("structs.c", "factorial_base");
    compare_with_gdb(program, {"break " + std::to_string(base), "run", "finish", "finish", "next"});
}

TEST_CASE("break FILE:LINE on a line without code slides to the next line with code, as gdb does",
          "[cli][gdb-compare]") {
    // Lines before a function, between functions and inside an inlined function whose code
    // has no rows of its own (clang -O2: scale's line 12 slides to sum_squares' loop).
    auto program = GENERATE(from_range(example_variants("optimized", 0)), from_range(example_variants("optimized", 2)));
    int last = example_line("optimized.c", "call_square") + 2;   // `return 0;` of main
    REQUIRE(last > 20);
    std::vector<std::string> cmds;
    for (int line = 1; line <= last; ++line) {
        cmds.push_back("break optimized.c:" + std::to_string(line));
    }
    compare_with_gdb(program, cmds);
}

TEST_CASE("break on a line of an inlined function without rows stops where gdb stops", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("optimized", 2)));
    int line = example_line("optimized.c", "scale_body");
    REQUIRE(line > 0);
    compare_with_gdb(program, {"break optimized.c:" + std::to_string(line), "run", "info breakpoints"});
}

TEST_CASE("info line without an argument answers for the current line from its first row, as gdb",
          "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"break area_of", "run", "info line", "stepi", "info line", "up", "info line",
                               "down", "finish", "info line"});
}

TEST_CASE("starti stops at the loader's first instruction, and stepi, info sharedlibrary and a breakpoint go on from "
          "there, as in gdb",
          "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"starti", "info registers rip", "stepi", "x/i $pc", "info sharedlibrary",
                               "break factorial", "continue", "info sharedlibrary", "delete", "continue"});
}

TEST_CASE("start before any run shows main's file address, and after a run addresses stay where the program was, "
          "as in gdb",
          "[cli][gdb-compare]") {
    // gdb sets start's temporary breakpoint before the program exists (0x1249 in a PIE), and
    // keeps the program's relocation once its process is gone: break, print, x, info line and
    // info symbol then show run-time addresses (0x555555555249).
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_with_gdb(program, {"start", "next", "kill", "print &main", "print factorial", "info line factorial",
                               "x/2i factorial", "info address main", "info symbol factorial", "print &global_counter", "x/4xb &global_counter",
                               "break factorial", "info breakpoints", "start", "info symbol $pc", "continue"});
}

TEST_CASE("print main and break *main find the program's function, as gdb, without indexing the libraries' globals",
          "[cli][gdb-compare]") {
    // A name the program defines as a function is found there, as gdb finds it in the
    // program's global block: no later library is searched for a variable or an enumerator
    // of that name (libc's whole index of globals took 0.3 s of `print main`).
    auto program = example_path("structs");
    std::vector<std::string> cmds{"break *main", "disable 1", "break factorial", "run", "print main", "print &main",
                                  "print factorial", "delete", "continue"};
    auto args = ex_args(cmds);
    args.push_back(program);
    auto ours = ompdbg_batch(args, run_options().timeout_after(120s).set_env("OMPDBG_LOG", "dwarf"));
    INFO(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(grep(ours.err, R"(libc\.so\.6: indexed)").empty());
    compare_with_gdb(program, cmds);
}
