// Multi-process debugging after fork(2), compared with gdb on the same program
// (examples/procs.c `fork`): `set follow-fork-mode child` (the child becomes inferior 2,
// its breakpoints hit, the parent is detached and runs on), `set detach-on-fork off` (both
// stay, `info inferiors`, `inferior N`, each continued on its own). Process ids and
// addresses differ between the runs and are masked.

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// The debugger's lines about processes and inferiors, ids masked: fork notes, the
/// `info inferiors` table, inferior switches, exits, and the child's breakpoint hit.
std::vector<std::string> inferior_lines(const std::string& out) {
    static const std::vector<std::string> prefixes{
        "[Attaching after", "[New inferior", "[Detaching after", "[Inferior ", "  Num  ", "* ", "  1 ", "  2 ",
        "[Switching to inferior", "[Current inferior", "[Switching to thread 2", "Thread 2.1 "};
    std::vector<std::string> keep;
    for (auto l : daily::process_event_lines(out, prefixes, std::regex(R"((parent: child exited \d+|child \d+)\n)"))) {
        // gdb numbers a breakpoint's location per inferior ("Breakpoint 1.2").
        keep.push_back(std::regex_replace(l, std::regex(R"(Breakpoint (\d+)\.\d+,)"), "Breakpoint $1,"));
    }
    return keep;
}

}  // namespace

TEST_CASE("follow-fork-mode child: the child is inferior 2, its breakpoint hits, the parent runs on, as gdb",
          "[cli][fork]") {
    auto program = example_path("procs");
    std::vector<std::string> cmds{"set follow-fork-mode child", "break in_child", "run", "info inferiors", "bt",
                                  "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"fork"});
    auto gdb = gdb_cmds(program, cmds, {"fork"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = inferior_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "[New inferior 2 (process N)]") != expected.end());
    CHECK(joined(inferior_lines(ours.out)) == joined(expected));
    // The child's stack is the child's: in_child called from main.
    CHECK(ours.out.find("#0  in_child () at ") != std::string::npos);
    CHECK(ours.out.find(" in main (argc=2, argv=") != std::string::npos);
    // The child printed its own pid, the detached parent saw it exit with 7.
    std::smatch m;
    REQUIRE(std::regex_search(ours.out, m, std::regex(R"(\[New inferior 2 \(process (\d+)\)\])")));
    CHECK(has_line(ours.out, "child " + m[1].str()));
    CHECK(has_line(ours.out, "parent: child exited 7"));
}

TEST_CASE("detach-on-fork off: both processes are inferiors, each continued on its own, as gdb", "[cli][fork]") {
    auto program = example_path("procs");
    // The parent stops before its waitpid (it would wait there for the stopped child for ever).
    std::vector<std::string> cmds{"set detach-on-fork off", "break in_child",
                                  "break " + example_location("procs.c", "parent_wait"), "run",
                                  "info inferiors", "inferior 2", "continue", "continue", "info inferiors",
                                  "inferior", "inferior 1", "continue", "info inferiors", "inferior 3"};
    auto ours = ompdbg_cmds(program, cmds, {"fork"});
    auto gdb = gdb_cmds(program, cmds, {"fork"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = inferior_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "[Inferior 2 (process N) exited with code 07]") !=
            expected.end());
    CHECK(joined(inferior_lines(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "parent: child exited 7"));
    CHECK(has_line(ours.err, "Inferior ID 3 not known."));
}

TEST_CASE("follow-fork-mode child: a watchpoint set in the parent reports the child's write, as gdb",
          "[cli][fork][watch]") {
    auto program = example_path("fork_steps");
    // The child's child_work adds 5 to the global `counter`; the parent never writes it.
    // Software watchpoints on both sides (debug registers do not trap on every machine,
    // and the two kinds stop at different instructions).
    std::vector<std::string> cmds{"set can-use-hw-watchpoints 0", "set follow-fork-mode child", "break spawn", "run",
                                  "watch counter", "continue", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"fork"});
    auto gdb = gdb_cmds(program, cmds, {"fork"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto hit_lines = [](const std::string& out) {
        return grep(out, R"(^(Old value = |New value = |child_work \(|\d+\t))");
    };
    auto expected = hit_lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "New value = 5") != expected.end());
    CHECK(joined(hit_lines(ours.out)) == joined(expected));
    // Reported in the child, after it was followed.
    auto followed = ours.out.find("[Attaching after ");
    REQUIRE(followed != std::string::npos);
    CHECK(ours.out.find("Watchpoint 2: counter", followed) != std::string::npos);
    CHECK(ours.out.find("New value = 5", followed) != std::string::npos);
    // The detached parent prints while the debugger reports: its line may land anywhere.
    CHECK(ours.out.find("child status 100") != std::string::npos);
}
