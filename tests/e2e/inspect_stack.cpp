// Stack commands (bt, frame, up, down, info frame, info locals, info args) on the example
// programs, compared with gdb's answer on the same binary.

#include "inspect_common.hpp"

#include <catch2/catch.hpp>

using namespace ompdbg::test;
using namespace ompdbg::test::inspect;

TEST_CASE("bt in a recursive call prints the frames gdb prints", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    CAPTURE(program);
    std::vector<std::string> cmds{"break factorial", "run", "continue", "bt", "bt 1", "bt -1"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = grep(gdb.out, "^#[0-9]+ |^\\(More stack");
    REQUIRE(expected.size() >= 5);
    CHECK(joined(grep(ours.out, "^#[0-9]+ |^\\(More stack")) == joined(expected));
}

TEST_CASE("frame, up, down and their errors match gdb", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    CAPTURE(program);
    // gdb clamps `up 5`/`down 7` silently; only a step past the end is an error.
    std::vector<std::string> cmds{"break factorial", "run",  "continue", "frame",   "up",
                                  "up 5",            "up",   "down",     "down 7",  "down",
                                  "frame 2",         "frame 99", "frame 1"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // Frame lines and the source line printed after each.
    const std::string pattern = "^#[0-9]+ |^[0-9]+\t";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 10);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
    for (const char* msg : {"Initial frame selected; you cannot go up.",
                            "Bottom (innermost) frame selected; you cannot go down.",
                            "No frame at level 99."}) {
        REQUIRE(gdb.all().find(msg) != std::string::npos);
        CHECK(ours.err.find(msg) != std::string::npos);
    }
    CHECK(ours.exit_code != 0);   // failing commands make batch mode fail
}

TEST_CASE("info frame describes the frame as gdb does", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    CAPTURE(program);
    std::vector<std::string> cmds{"break factorial", "run", "continue", "info frame", "up",
                                  "info frame"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // Level, frame address, rip/saved rip, caller/callee links, language, arglist.
    const std::string pattern =
        "^Stack level|^ rip = |^ called by|^ caller of|^ source language|^ Arglist|^ Locals";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 10);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
}

TEST_CASE("info locals and info args print the values gdb prints", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    CAPTURE(program);
    const int line = example_line("structs.c", "after_loop");
    REQUIRE(line > 0);
    std::vector<std::string> cmds{"break structs.c:" + std::to_string(line), "run", "info args",
                                  "info locals", "break factorial", "continue", "info locals",
                                  "info args", "bt full"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string pattern = "^ *[a-z_]+ = |^No locals\\.|^No arguments\\.|^#[0-9]+ ";
    auto expected = grep(gdb.out, pattern);
    REQUIRE(expected.size() >= 20);
    CHECK(joined(grep(ours.out, pattern)) == joined(expected));
}

TEST_CASE("bt at -O2 shows the inlined frames gdb shows", "[cli]") {
    std::vector<std::string> programs = example_variants("optimized", 2);
    auto program = GENERATE_COPY(from_range(programs));
    CAPTURE(program);
    std::vector<std::string> cmds{"break square", "run", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = frames_without_args(gdb.out);
    REQUIRE(expected.size() >= 2);
    CHECK(joined(frames_without_args(ours.out)) == joined(expected));
}

TEST_CASE("bt through libc frames names the functions gdb names", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    CAPTURE(program);
    // write() is reached from printf inside area_of: frames in libc, then the program's.
    std::vector<std::string> cmds{"break area_of", "run", "break write", "continue", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // Frame 0 depends on where `break write` planted its breakpoint; the callers do not.
    auto expected = frames_without_args(gdb.out);
    REQUIRE(expected.size() >= 4);
    expected.erase(expected.begin());
    auto got = frames_without_args(ours.out);
    if (!got.empty()) {
        got.erase(got.begin());
    }
    CHECK(joined(got) == joined(expected));
}

TEST_CASE("stack commands without a process say there is no stack", "[cli]") {
    const std::string program = example_path("structs");
    std::vector<std::string> cmds{"bt", "frame", "up", "down", "info frame", "info locals",
                                  "info args"};
    auto gdb = gdb_cmds(program, cmds);
    auto expected = lines_of(gdb.err);
    REQUIRE(expected.size() == cmds.size());
    for (std::size_t i = 0; i < cmds.size(); ++i) {
        auto ours = ompdbg_cmds(program, {cmds[i]});
        CAPTURE(cmds[i], ours.all());
        REQUIRE_FALSE(ours.timed_out);
        CHECK(ours.err.find(expected[i]) != std::string::npos);
        CHECK(ours.exit_code != 0);
    }
}

TEST_CASE("info threads shows each thread's own arguments, as gdb does", "[cli]") {
    auto program = GENERATE(from_range(example_variants("threads")));
    CAPTURE(program);
    // The condition makes the stopped worker deterministic (works[0]); `thread 1` selects
    // main, so the worker's row must not be formatted with main's registers.
    std::vector<std::string> cmds{"break worker if w->index == 0", "run", "thread 1", "info threads"};
    auto ours = ompdbg_cmds(program, cmds, {"2"});
    auto gdb = gdb_cmds(program, cmds, {"2"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // The frame column of worker-0's row: "worker (w=0x... <works>) at .../threads.c:24".
    auto frame_of = [](const std::string& out) {
        static const std::regex row(R"re("worker-0" +(worker \(.*)$)re");
        std::vector<std::string> found;
        for (const auto& l : lines_of(out)) {
            std::smatch m;
            if (std::regex_search(l, m, row)) {
                found.push_back(m[1]);
            }
        }
        return found;
    };
    auto expected = frame_of(gdb.out);
    REQUIRE(expected.size() == 1);
    REQUIRE(expected[0].find("w=0x") != std::string::npos);
    CHECK(joined(frame_of(ours.out)) == joined(expected));
}
