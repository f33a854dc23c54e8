// vfork(2) children followed with `set follow-fork-mode child`, compared with gdb on the same
// program (examples/vfork_follow.c): the child is inferior 2 and its breakpoints hit in the
// memory it shares with the parent, which is held ("is vfork parent of inferior 2") until
// the child execs or exits and then detached (detach-on-fork on) or kept (off). The
// parent's own output proves that no int3 of ours was left in its memory: it calls the
// function the child stopped in. Process ids and addresses differ between runs and are
// masked.

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// The debugger's lines about processes, inferiors and stops, ids masked.
std::vector<std::string> vfork_lines(const std::string& out) {
    static const std::vector<std::string> prefixes{
        "[Attaching after", "[New inferior", "[Detaching", "[Inferior ", "  Num  ", "* ", "  1 ", "  2 ",
        "\tis vfork ", "[Switching to", "[Current inferior", "Thread ", "Catchpoint ", "process "};
    std::vector<std::string> keep;
    for (auto l : daily::process_event_lines(out, prefixes,
                                              std::regex(R"((parent: child exited \d+, shared \d+|image \d+)\n)"))) {
        l = std::regex_replace(l, std::regex(R"(\(vforked process \d+\))"), "(vforked process N)");
        // glibc's vfork has two names; the debuggers pick different ones.
        l = std::regex_replace(l, std::regex(R"(__libc_vfork|__vfork)"), "vfork");
        keep.push_back(mask_stack(l));   // argv's address moves with the environment
    }
    return keep;
}

void compare(const std::vector<std::string>& cmds, const std::string& mode, const std::string& must_have) {
    auto program = example_path("vfork_follow");
    auto ours = ompdbg_cmds(program, cmds, {mode});
    auto gdb = gdb_cmds(program, cmds, {mode});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = vfork_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), must_have) != expected.end());
    CHECK(joined(vfork_lines(ours.out)) == joined(expected));
    // The parent ran through child_step after the child: clean of our int3s.
    CHECK(has_line(ours.out, std::string("parent: child exited ") + (mode == "exec" ? "3" : "7") + ", shared 5"));
}

}  // namespace

TEST_CASE("follow-fork-mode child follows a vfork child, and detaches the held parent after the child's exit, as gdb",
          "[cli][fork]") {
    compare({"set follow-fork-mode child", "break child_step", "run", "bt", "info inferiors", "continue",
             "info inferiors"},
            "exit", "[Detaching vfork parent process N after child exit]");
}

TEST_CASE("follow-fork-mode child: a vfork child that execs frees its parent, and the new program's breakpoints hit, as gdb",
          "[cli][fork]") {
    compare({"set follow-fork-mode child", "break child_step", "break main", "run", "continue", "info inferiors",
             "continue", "info inferiors", "continue"},
            "exec", "[Detaching vfork parent process N after child exec]");
}

TEST_CASE("catch vfork with follow-fork-mode child: the catchpoint stops the parent, continue follows the child, as gdb",
          "[cli][fork]") {
    compare({"set follow-fork-mode child", "catch vfork", "break child_step", "run", "info inferiors", "continue",
             "info inferiors", "continue"},
            "exec", "[Attaching after Thread 0x... (LWP N) vfork to child process N]");
}

TEST_CASE("follow-fork-mode child with detach-on-fork off keeps the vfork parent, whose breakpoints are back after the child",
          "[cli][fork]") {
    auto program = example_path("vfork_follow");
    std::vector<std::string> cmds{"set detach-on-fork off", "set follow-fork-mode child", "break child_step", "run",
                                  "info inferiors", "continue", "info inferiors", "inferior 1", "continue",
                                  "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"exit"});
    auto gdb = gdb_cmds(program, cmds, {"exit"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // gdb drops the exited inferior 2 when inferior 1 resumes, and then names the parent's
    // thread "Thread 1"; ompdbg keeps listing it until `info inferiors` ("Thread 1.1").
    auto unqualify = [](std::vector<std::string> lines) {
        for (auto& l : lines) {
            l = std::regex_replace(l, std::regex(R"(^Thread 1\.1 ")"), "Thread 1 \"");
        }
        return lines;
    };
    auto expected = unqualify(vfork_lines(gdb.out));
    REQUIRE(std::find(expected.begin(), expected.end(), "\tis vfork parent of inferior 2") != expected.end());
    CHECK(joined(unqualify(vfork_lines(ours.out))) == joined(expected));
    // The parent hit child_step itself (x=0) once the child had exited, then ran to its end.
    CHECK(ours.out.find("hit Breakpoint 1, child_step (x=0)") != std::string::npos);
    CHECK(has_line(ours.out, "parent: child exited 7, shared 5"));
    CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
}

TEST_CASE("follow-fork-mode child: a watchpoint set in the parent reports the vfork child's write, and the detached parent runs clean, as gdb",
          "[cli][fork][watch]") {
    // Software watchpoints on both sides (debug registers do not trap on every machine).
    // The child's write is in the memory it shares with the parent; the parent, detached
    // after the child's exit, writes the same page (child_step(0)) and must not fault.
    std::vector<std::string> cmds{"set can-use-hw-watchpoints 0", "set follow-fork-mode child", "break main", "run",
                                  "watch shared", "continue", "continue"};
    auto program = example_path("vfork_follow");
    auto ours = ompdbg_cmds(program, cmds, {"exit"});
    auto gdb = gdb_cmds(program, cmds, {"exit"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto hit_lines = [](const std::string& out) {
        // The detached parent's line may land inside a debugger line.
        std::string text = std::regex_replace(out, std::regex(R"(parent: child exited \d+, shared \d+\n)"), "");
        auto lines = grep(text, R"(^(Thread 2\.1 .* hit Watchpoint|Old value = |New value = |child_step \(|\[Detaching|\[Inferior ))");
        for (auto& l : lines) {
            l = std::regex_replace(l, std::regex(R"(process \d+)"), "process N");
        }
        return lines;
    };
    auto expected = hit_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "New value = 5") != expected.end());
    CHECK(joined(hit_lines(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "parent: child exited 7, shared 5"));
}

TEST_CASE("detach-on-fork off: the held vfork parent is not resumed while its child is stopped, with gdb's message",
          "[cli][fork]") {
    // It would wait in vfork() for a child that the debugger holds (gdb 13 resumes it and
    // hangs here; its message is the one it gives for the same deadlock in another mode).
    auto program = example_path("vfork_follow");
    auto ours = ompdbg_cmds(program,
                            {"set detach-on-fork off", "set follow-fork-mode child", "break child_step", "run",
                             "inferior 1", "continue", "inferior 2", "continue", "inferior 1", "continue",
                             "continue"},
                            {"exit"});
    CAPTURE(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(ours.err, "Can not resume the parent process over vfork in the foreground while"));
    // Once the child has exited, the parent stops in child_step(0) and runs to its end.
    CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 2 \(process \d+\) exited with code 07\])")));
    CHECK(has_line(ours.out, "parent: child exited 7, shared 5"));
}
