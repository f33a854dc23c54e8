// generate-core-file keeps the vector registers: gdb reading our core shows ymm7 (both
// 128-bit halves) as gdb shows it in the live process at the same stop, and as the program
// set it.

#include "daily_common.hpp"

#include <catch2/catch.hpp>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::daily;

namespace {

/// gdb's value lines ("$1 = ...") of a transcript.
std::vector<std::string> value_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind("$", 0) == 0) {
            keep.push_back(l);
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("core: generate-core-file writes NT_X86_XSTATE: gdb reads $ymm7 from our core as in the live process",
          "[cli][core][gcore]") {
    scratch_dir dir;
    auto program = example_path("vector_regs");
    std::string core = (dir.path() / "ours.core").string();
    const std::vector<std::string> regs{"p/x $ymm7.v8_int32", "p/x $xmm7.v4_int32"};

    // What the program loaded, from its own output.
    auto printed = program_output(program);
    REQUIRE(printed.size() == 1);
    std::string pattern = "{" + printed[0] + "}";
    for (std::size_t p = 0; (p = pattern.find(' ', p)) != std::string::npos; p += 2) {
        pattern.replace(p, 1, ", ");
    }

    // gdb's view of the live process at the checkpoint.
    std::vector<std::string> live_cmds{"break checkpoint", "run"};
    live_cmds.insert(live_cmds.end(), regs.begin(), regs.end());
    auto live = gdb_cmds(program, live_cmds);
    auto live_values = value_lines(live.out);
    CAPTURE(live.all(), pattern);
    REQUIRE(live_values.size() == 2);
    REQUIRE(live_values[0] == "$1 = " + pattern);

    // Our core of the same stop, read by gdb.
    auto ours = ompdbg_cmds(program, {"break checkpoint", "run", "generate-core-file " + core});
    CAPTURE(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    REQUIRE(has_line(ours.out, "Saved corefile " + core));
    auto read = gdb_core(program, core, regs);
    CAPTURE(read.all());
    CHECK(value_lines(read.out) == live_values);
}
