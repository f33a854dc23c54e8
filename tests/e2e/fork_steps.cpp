// fork(2) and vfork(2) in the default mode (follow-fork-mode parent, detach-on-fork on),
// compared with gdb on the same program (examples/fork_steps.c): gdb's "[Detaching after
// fork from child process N]" line when the child is let go, `next`/`step`/`finish` over the
// fork ending where gdb's do, and a child that runs through code where the parent has a
// breakpoint without dying of SIGTRAP (the program prints the child's fate itself).

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// What a user follows of the session: the detach notes, the source lines the steps show,
/// `finish`'s value, the program's own report and the exit; pids masked.
std::vector<std::string> session_lines(const std::string& out) {
    static const std::regex wanted(R"(^(\[Detaching after |\d+\t|Value returned is |child status |\[Inferior 1 ))");
    std::vector<std::string> keep;
    for (auto l : lines_of(out)) {
        if (std::regex_search(l, wanted)) {
            keep.push_back(std::regex_replace(l, std::regex(R"(process \d+)"), "process N"));
        }
    }
    return keep;
}

/// The child's pid in the detach note; 0 without one.
int detached_child(const std::string& out) {
    std::smatch m;
    if (std::regex_search(out, m, std::regex(R"(\[Detaching after v?fork from child process (\d+)\])"))) {
        return std::stoi(m[1].str());
    }
    return 0;
}

}  // namespace

TEST_CASE("the default fork mode says which child it lets go, as gdb", "[cli][fork]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    auto program = example_path("procs");
    std::vector<std::string> cmds{"run"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    REQUIRE(has_line(gdb.out, "[Detaching after " + mode + " from child process " +
                                  std::to_string(detached_child(gdb.out)) + "]"));
    // The pid is the child's: it prints its own.
    int child = detached_child(ours.out);
    REQUIRE(child > 0);
    CHECK(has_line(ours.out, "[Detaching after " + mode + " from child process " + std::to_string(child) + "]"));
    CHECK(has_line(ours.out, "child " + std::to_string(child)));
    CHECK(has_line(ours.out, "parent: child exited 7"));
    // Told before the child runs, as gdb.
    CHECK(ours.out.find("[Detaching after") < ours.out.find("child " + std::to_string(child)));
}

TEST_CASE("next, step and finish over fork/vfork end where gdb's do, the child runs clean of breakpoints",
          "[cli][fork][step]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    auto program = example_path("fork_steps");
    // child_work's breakpoint is planted in the parent: the child runs through it while
    // the parent's `next` waits in waitpid.
    std::vector<std::string> cmds{"break child_work", "break spawn", "run", "next", "step",
                                  "next", "next", "next", "finish", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = session_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "child status 100") != expected.end());
    CHECK(joined(session_lines(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "child status 100"));   // not 5: SIGTRAP killed it
    CHECK(ours.out.find("Breakpoint 1, child_work") == std::string::npos);
}

TEST_CASE("finish out of a function that forks returns its value, as gdb", "[cli][fork][step]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    auto program = example_path("fork_steps");
    std::vector<std::string> cmds{"break child_work", "break spawn", "run", "finish", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = session_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "Value returned is $1 = 100") != expected.end());
    CHECK(joined(session_lines(ours.out)) == joined(expected));
}

TEST_CASE("catch fork/vfork: the child is let go on the next resume, said after the catchpoint, as gdb",
          "[cli][fork][catch]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    auto program = example_path("procs");
    std::vector<std::string> cmds{"catch " + mode, "run", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto events = [](const std::string& out) {
        std::vector<std::string> keep;
        for (auto l : grep(out, R"(^(Catchpoint 1 \(|\[Detaching after |child \d+$|parent: ))")) {
            l = std::regex_replace(l, std::regex(R"((process|child) \d+)"), "$1 N");
            keep.push_back(l.substr(0, std::min(l.size(), l.find("), ") == std::string::npos ? l.size() : l.find("), ") + 1)));
        }
        return keep;
    };
    auto expected = events(gdb.out);
    // "Catchpoint 1 (fork)" when set, the hit, the detach, the child's and the parent's lines.
    REQUIRE(expected.size() == 5);
    CHECK(joined(events(ours.out)) == joined(expected));
}
