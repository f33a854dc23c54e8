// Fast breakpoints (issue 21): ignore counts and `silent` + `continue` counters kept in the
// program by ompdbg's agent, so that ignored and counted hits cost no stop. Ground truth is
// the program's own: fast_loop counts the calls of f (calls_by_thread) and prints the total.

#include <catch2/catch.hpp>

#include "fast_common.hpp"
#include "transcript.hpp"

#include <string>

using namespace ompdbg::test;
using namespace ompdbg::test::fast;

TEST_CASE("an ignore count on a fast breakpoint is counted in the agent: it stops at the next hit with exact counts",
          "[e2e][fast][break][ignore]") {
    // One thread: at the stop the program has counted exactly the calls before this one.
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "break f", "ignore 1 99999", "run", "print i",
                    "print calls_by_thread[0]", "info breakpoints", "delete 1", "continue"},
                   {"200000", "1"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 99999"));
    CHECK(has_line(r.out, "$2 = 99999"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 100000 times"));
    CHECK(grep(r.out, "^\tignore next").empty());
    CHECK(has_line(r.out, ground_truth(200000, 1)));
}

TEST_CASE("what remains of an ignore count the agent keeps shows at the next stop in gdb's words",
          "[e2e][fast][break][ignore]") {
    // f runs 200,000 times on 4 threads, all ignored; the stop is in tiny, after the loop.
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "break f", "ignore 1 500000", "break tiny if x == 500", "run",
                    "info breakpoints", "continue"},
                   {"200000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, ground_truth(200000, 4)));
    CHECK(has_line(r.out, "\tbreakpoint already hit 200000 times"));
    CHECK(has_line(r.out, "\tignore next 300000 hits"));
    CHECK(has_line(r.out, "\thits counted in the target"));
    CHECK(has_line(r.out, "tiny sum 499500"));
}

TEST_CASE("a condition with an ignore count on 4 threads stops at the first hit past the count and counts on to the end",
          "[e2e][fast][break][ignore][condition]") {
    // 200 calls of f have i % 1000 == 0: the stop is the 151st of them, whichever thread
    // makes it; then 1000 more are ignored (49 come), and the program ends.
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "break f if i % 1000 == 0", "ignore 1 150", "run", "print i % 1000",
                    "info breakpoints", "ignore 1 1000", "continue", "info breakpoints"},
                   {"200000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 0"));
    CHECK(has_line(r.out, "\tstop only if i % 1000 == 0 (target evaluation)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 151 times"));
    CHECK(has_line(r.out, ground_truth(200000, 4)));
    CHECK(grep(r.out, "^\\[Inferior 1 \\(process [0-9]+\\) exited normally\\]$").size() == 1);
    // After the exit, from the agent's last counts (read at its breakpoint at exit).
    CHECK(has_line(r.out, "\tbreakpoint already hit 200 times"));
    CHECK(has_line(r.out, "\tignore next 951 hits"));
}

TEST_CASE("a breakpoint whose commands are silent and continue is counted in the agent and never stops",
          "[e2e][fast][break][commands]") {
    auto r = debug(fast_loop("O2"),
                   {"set breakpoint fast on", "break f", "commands", "silent", "continue", "end",
                    "break tiny if x == 500", "run", "info breakpoints", "continue", "info breakpoints"},
                   {"300000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, ground_truth(300000, 4)));
    // At tiny's stop, after the loop: every call of f, and the path that counted them.
    CHECK(has_line(r.out, "\tbreakpoint already hit 300000 times"));
    CHECK(has_line(r.out, "\thits counted in the target"));
    CHECK(has_line(r.out, "tiny sum 499500"));
    CHECK(grep(r.out, "^Breakpoint 1, ").empty());
}

TEST_CASE("counters on 80 threads, more than the agent's 64 counter shards, count every hit exactly",
          "[e2e][fast][break][commands]") {
    // Threads past the 64th share one shard and count atomically; the others each count in
    // their own, in the pad's native code. 80 threads race on fast_loop's calls_by_thread
    // (tid & 63): its sum, a reduction, is the ground truth here.
    const std::string sum = ground_truth(240000, 80).substr(ground_truth(240000, 80).find(" sum "));
    for (const char* condition : {"", " if i % 1000 == 7"}) {
        auto r = debug(fast_loop("O2"),
                       {"set breakpoint fast on", std::string("break f") + condition, "commands", "silent", "continue",
                        "end", "break tiny if x == 500", "run", "info breakpoints", "continue"},
                       {"240000", "80"});
        INFO(r.all());
        REQUIRE_FALSE(r.timed_out);
        CHECK(grep(r.out, "^calls [0-9]+" + sum + "$").size() == 1);
        CHECK(has_line(r.out, *condition ? "\tbreakpoint already hit 240 times" : "\tbreakpoint already hit 240000 times"));
        CHECK(has_line(r.out, "\thits counted in the target"));
        CHECK(grep(r.out, "^Breakpoint 1, ").empty());
    }
}

TEST_CASE("an unconditional breakpoint with an ignore count brings the agent at run", "[e2e][fast][break][ignore]") {
    // No condition anywhere: the ignore count alone makes `run` preload the agent.
    auto r = debug(fast_loop("O0"), {"break f", "ignore 1 70000", "break main", "run", "info breakpoints", "continue",
                                     "info breakpoints", "kill"},
                   {"100000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tignore next 70000 hits"));
    CHECK(has_line(r.out, "\thits counted in the target"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 70001 times"));
}

TEST_CASE("with fast breakpoints off an ignore count stays with the debugger and counts the same",
          "[e2e][fast][break][ignore]") {
    auto r = debug(fast_loop("O0"), {"break f", "ignore 1 3000", "run", "info breakpoints", "kill"}, {"8000", "4"},
                   run_options().set_env("OMPDBG_FAST_BREAKPOINTS", "off"));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tbreakpoint already hit 3001 times"));
    CHECK(grep(r.out, "^\thits counted in the target$").empty());
}
