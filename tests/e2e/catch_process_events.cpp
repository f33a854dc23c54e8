// `catch fork`, `catch vfork`, `catch exec` stop where gdb stops and report what gdb reports;
// `set follow-fork-mode` / `set detach-on-fork` accept what is supported and say what is not.

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// The catchpoint reports with the child's pid replaced (it differs between runs).
std::vector<std::string> catch_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind("Catchpoint ", 0) == 0 || l.rfind("parent: ", 0) == 0) {
            // The frame after "), " is compared for fork only below: inside vfork gdb names the
            // function by another of its aliases (__libc_vfork for __vfork).
            l = std::regex_replace(l, std::regex("process [0-9]+"), "process N");
            keep.push_back(l.substr(0, l.find("), ") == std::string::npos ? l.size() : l.find("), ") + 3));
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("catch fork and catch vfork stop in the parent with gdb's report; the child runs on", "[cli][catch]") {
    auto mode = GENERATE(std::string("fork"), std::string("vfork"));
    CAPTURE(mode);
    auto program = example_path("procs");
    std::vector<std::string> cmds{"catch " + mode, "run", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = catch_lines(gdb.out);
    REQUIRE(expected.size() == 3);
    CHECK(joined(catch_lines(ours.out)) == joined(expected));
    // The pid in the report is the child's: the child prints its own pid.
    std::smatch m;
    REQUIRE(std::regex_search(ours.out, m, std::regex("\\((v?)forked process ([0-9]+)\\)")));
    CHECK(has_line(ours.out, "child " + m[2].str()));
    CHECK(ours.out.find("exited normally]") != std::string::npos);
    if (mode == "fork") {
        CHECK(ours.out.find("(forked process " + m[2].str() + "), arch_fork (") != std::string::npos);
    }
}

TEST_CASE("catch exec stops at the new program's first instruction with gdb's report", "[cli][catch]") {
    auto program = example_path("procs");
    std::vector<std::string> cmds{"catch exec", "run", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"exec"});
    auto gdb = gdb_cmds(program, cmds, {"exec"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.out.find("Catchpoint 1 (exec'd " + program + "), ") != std::string::npos);
    CHECK(gdb.out.find("Catchpoint 1 (exec'd " + program + "), ") != std::string::npos);
    CHECK(ours.out.find(" in _start () from ") != std::string::npos);
    CHECK(has_line(ours.out, "hello from write"));
    CHECK(ours.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("without catchpoints fork and exec run through; unsupported follow-fork settings say so",
          "[cli][catch]") {
    auto program = example_path("procs");
    auto r = ompdbg_cmds(program, {"set follow-fork-mode parent", "set detach-on-fork on", "run"}, {"fork"});
    CAPTURE(r.all());
    CHECK(r.exit_code == 0);
    CHECK(has_line(r.out, "parent: child exited 7"));
    CHECK(r.out.find("Catchpoint") == std::string::npos);
    auto bad = ompdbg_cmds(program, {"set follow-fork-mode child", "set detach-on-fork off",
                                     "set follow-fork-mode sideways", "echo alive\\n"});
    CAPTURE(bad.all());
    CHECK(bad.term_signal == 0);
    CHECK(bad.err.find("follow-fork-mode child is not supported yet") != std::string::npos);
    CHECK(bad.err.find("detach-on-fork off is not supported yet") != std::string::npos);
    CHECK(bad.err.find("Valid arguments are child, parent.") != std::string::npos);
    CHECK(bad.out.find("alive") != std::string::npos);
}
