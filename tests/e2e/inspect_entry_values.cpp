// Optimized code as gdb shows it: a parameter's value on entry to its function ("x=x@entry=5",
// "x=23, x@entry=7") from the caller's DW_TAG_call_site parameters, and the stop at a
// breakpoint on an inlined function whose code starts with another inlined call. Every
// gcc/clang x DWARF 4/5 -O2 build, compared with gdb's answer on the same binary.

#include "inspect_common.hpp"

#include <catch2/catch.hpp>

using namespace ompdbg::test;
using namespace ompdbg::test::inspect;

TEST_CASE("frame lines show a parameter's entry value as gdb does (n@entry)", "[cli]") {
    auto program = GENERATE(from_range(example_variants("entry_values", 2)));
    CAPTURE(program);
    std::vector<std::string> cmds{"break leaf", "run", "bt", "continue", "bt", "up", "continue", "bt",
                                  "frame 1", "finish"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^#[0-9]+ |^Breakpoint [0-9]+, |^Run till exit from ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 12);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
}

TEST_CASE("without call-site DWARF (-O0) no entry values are shown, as gdb", "[cli]") {
    auto program = GENERATE(from_range(example_variants("entry_values")));
    CAPTURE(program);
    std::vector<std::string> cmds{"break leaf", "run", "bt", "continue", "continue", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^#[0-9]+ |^Breakpoint [0-9]+, ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 8);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
    CHECK(ours.out.find("@entry") == std::string::npos);
}

TEST_CASE("break on an inlined function stops in it even when its code starts with another inlined call", "[cli]") {
    auto program = GENERATE(from_range(example_variants("optimized", 2)));
    CAPTURE(program);
    // gcc: scale's first instruction is also square's; gdb stops "in" scale (hiding
    // square), and the next step enters square without running.
    std::vector<std::string> cmds{"break scale", "break square", "info breakpoints", "run", "bt", "step", "bt",
                                  "continue", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern =
        "^#[0-9]+ |^Breakpoint [0-9]+(,| at )|^[0-9]+(\\.[0-9]+)? +(breakpoint|y) |^[a-z_]+ \\(.*\\) at ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 6);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
}

TEST_CASE("break FILE:LINE reports the line asked for when an inlined call starts at its address", "[cli]") {
    // gcc -O2: line 12 (scale's body) and line 8 (square's, inlined into it) share one
    // address; gdb names line 12 in "Breakpoint N at" and in info breakpoints.
    auto program = example_path("optimized", "gcc", 5, 2);
    std::vector<std::string> cmds{"break optimized.c:12", "info breakpoints", "run", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^#[0-9]+ |^Breakpoint [0-9]+(,| at )|^[0-9]+ +breakpoint ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 5);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
}

TEST_CASE("a program compiled with a relative source path shows that name, as gdb", "[cli]") {
    // `gcc -g structs.c` in the source directory: gdb names "structs.c" (the unit's
    // DW_AT_name) in breakpoint messages, info breakpoints, frame lines and info frame.
    auto cc = GENERATE(std::string("gcc"), std::string("clang"));
    auto program = example_path("structs-relative-" + cc);
    CAPTURE(program);
    std::vector<std::string> cmds{"break factorial", "info breakpoints", "run", "bt", "info frame", "finish"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^#[0-9]+ |^Breakpoint [0-9]+(,| at )|^[0-9]+ +breakpoint |^ rip = |^Run till exit";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 7);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
    CHECK(ours.out.find(" at structs.c:") != std::string::npos);
}

TEST_CASE("frame lines and info args list every formal parameter, a dropped one as <optimized out> (gdb)", "[cli]") {
    auto program = GENERATE(from_range(example_variants("dropped_params", 2)));
    CAPTURE(program);
    // kernel's `wts` is never read (gcc calls a clone kernel.isra.0 whose DWARF omits it),
    // scaled's `unused` has no code (its inlined copy omits it): gdb lists both. kernel is
    // also the caller of an inlined frame (report). (`finish` out of kernel is left out:
    // gcc returns to the entry of scaled's inlined copy, where gdb shows main.)
    std::vector<std::string> cmds{"break record", "run", "bt", "up", "up", "info args", "frame", "continue",
                                  "bt", "up", "info args", "down", "finish"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern =
        "^#[0-9]+ |^Breakpoint [0-9]+, |^Run till exit from |^(0x[0-9a-f]+ in )?[a-z_]+ \\(.*\\) at |^[a-z_]+ = ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 16);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
    CHECK(ours.out.find("wts=<optimized out>") != std::string::npos);
    CHECK(ours.out.find("unused=<optimized out>") != std::string::npos);
}

TEST_CASE("bt shows an aggregate argument as ..., also when it is optimized out (gdb)", "[cli]") {
    auto program = GENERATE(from_range(example_variants("aggregate_args", 2)));
    CAPTURE(program);
    std::vector<std::string> cmds{"break use", "run", "bt", "up", "info args", "up", "info args"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^#[0-9]+ |^Breakpoint [0-9]+, |^[a-z_]+ = ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 8);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
    CHECK(ours.out.find("dead_pair (p=...") != std::string::npos);
    CHECK(ours.out.find("<optimized out>") != std::string::npos);
}

TEST_CASE("arithmetic, comparisons, casts and dereferences of an optimized-out value fail as in gdb (gdb)", "[cli]") {
    auto program = GENERATE(from_range(example_variants("dropped_params", 2)));
    CAPTURE(program);
    // In kernel (two frames up from record) gcc and clang leave `wts` and `count` without a
    // location: every operation that needs their contents is an error, never a zero.
    std::vector<std::string> cmds{"break record", "run", "up", "up"};
    for (const char* e : {"wts", "wts + 1", "wts > 0", "*wts", "wts[1]", "(long)wts", "!count", "count == 0",
                          "count * 2 + 1", "-count", "count ? 1 : 2", "count && 1", "amp * 2"}) {
        cmds.push_back("echo == " + std::string(e) + "\\n");
        cmds.push_back(std::string("print ") + e);
    }
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // The values printed, in order, and the error lines, in order.
    const std::string printed = "^== |^\\$[0-9]+ = ";
    CHECK(joined(grep(ours.out, printed)) == joined(grep(gdb.out, printed)));
    const std::string errors = "optimized out|not a number|Cannot access";
    auto expected = grep(gdb.err, errors);
    CHECK(expected.size() >= 5);
    CHECK(joined(grep(ours.err, errors)) == joined(expected));
}
