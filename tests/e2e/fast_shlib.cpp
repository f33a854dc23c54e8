// Fast breakpoints (issue 21) whose condition reads a thread-local (the agent finds it from
// the thread pointer), and whose site is in a shared library far from the executable (its
// pad lives near the library). Ground truth is the program's own: fast_shlib counts the
// threads whose thread-local reached 1000 and the i with i % 1000 == 999.

#include <catch2/catch.hpp>

#include "fast_common.hpp"
#include "transcript.hpp"

#include <chrono>
#include <string>
#include <vector>

using namespace ompdbg::test;
using namespace ompdbg::test::fast;

namespace {

std::string fast_shlib() {
    return std::string(targets_dir) + "/fast/fast_shlib-gcc-dwarf5-O0";
}

}  // namespace

TEST_CASE("a condition on a thread-local is evaluated in the target once per thread of a 4-thread loop",
          "[e2e][fast][break][condition][tls]") {
    // 100,000 iterations on 4 threads: each thread calls g 25,000 times and enters it once
    // with tl_calls == 999.
    auto r = debug(fast_shlib(),
                   {"set breakpoint fast on", "break g if tl_calls == 999", "run", "info breakpoints", "print tl_calls",
                    "continue", "print tl_calls", "continue", "continue", "continue"},
                   {"100000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "threads with 1000 calls 4, i % 1000 == 999 100 times, sum 6250599992"));
    CHECK(grep(r.out, "^Thread [0-9]+ .* hit Breakpoint 1, g \\(i=[0-9]+\\) at .*fast_shlib.c:").size() +
              grep(r.out, "^Breakpoint 1, g \\(i=[0-9]+\\) at .*fast_shlib.c:").size() ==
          4);
    CHECK(has_line(r.out, "\tstop only if tl_calls == 999 (target evaluation)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, "$1 = 999"));
    CHECK(has_line(r.out, "$2 = 999"));
}

TEST_CASE("a condition in a shared library far from the executable is evaluated in the target",
          "[e2e][fast][break][condition][shlib]") {
    auto r = debug(fast_shlib(),
                   {"set breakpoint fast on", "break lib_step if i % 1000 == 999", "run", "info breakpoints",
                    "print i", "info sharedlibrary", "continue", "print i", "continue"},
                   {"2000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tstop only if i % 1000 == 999 (target evaluation)"));
    CHECK(grep(r.out, "^\\$[12] = (999|1999)$").size() == 2);
    CHECK(grep(r.out, "^threads with 1000 calls 0, i % 1000 == 999 2 times, sum ").size() == 1);
}

TEST_CASE("a condition in a shared library stops exactly as often as the program says on 4 threads",
          "[e2e][fast][break][condition][shlib]") {
    auto r = debug(fast_shlib(),
                   {"set breakpoint fast on", "break lib_step if i % 1000 == 999", "commands", "silent", "print i",
                    "continue", "end", "run", "info breakpoints"},
                   {"100000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "threads with 1000 calls 4, i % 1000 == 999 100 times, sum 6250599992"));
    CHECK(grep(r.out, "^\\$[0-9]+ = [0-9]*999$").size() == 100);
    CHECK(has_line(r.out, "\tbreakpoint already hit 100 times"));
}

TEST_CASE("dprintf's %s of a char array is printed in the target as gdb's dprintf prints it",
          "[e2e][fast][dprintf][shlib]") {
    const std::vector<std::string> cmds = {"dprintf lib_step,\"%s %ld\\n\",step_tag,i", "break g if i == 399",
                                           "run", "info breakpoints", "delete 2", "continue"};
    auto r = debug(fast_shlib(), cmds, {"400", "1"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tprinted in the target"));
    auto ours = grep(r.out, "^step [0-9]+$");
    CHECK(ours.size() == 400);
    CHECK(has_line(r.out, "step 0"));
    CHECK(has_line(r.out, "step 399"));
    auto gdb = gdb_batch({"-ex", cmds[0], "-ex", "run", "--args", fast_shlib(), "400", "1"},
                         run_options().timeout_after(std::chrono::seconds(120)));
    CHECK(grep(gdb.out, "^step [0-9]+$") == ours);
}
