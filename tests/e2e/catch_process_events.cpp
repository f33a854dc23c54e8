// `catch fork`, `catch vfork`, `catch exec` stop where gdb stops and report what gdb reports;
// `set follow-fork-mode` / `set detach-on-fork` reject bad values (following: fork_follow.cpp).

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

TEST_CASE("catch fork and catch vfork stop in the parent with gdb's report, the child runs on", "[cli][catch]") {
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

TEST_CASE("without catchpoints fork and exec run through, bad follow-fork settings say so", "[cli][catch]") {
    auto program = example_path("procs");
    auto r = ompdbg_cmds(program, {"set follow-fork-mode parent", "set detach-on-fork on", "run"}, {"fork"});
    CAPTURE(r.all());
    CHECK(r.exit_code == 0);
    CHECK(has_line(r.out, "parent: child exited 7"));
    CHECK(r.out.find("Catchpoint") == std::string::npos);
    auto bad = ompdbg_cmds(program, {"set follow-fork-mode sideways", "set detach-on-fork maybe", "echo alive\\n"});
    CAPTURE(bad.all());
    CHECK(bad.term_signal == 0);
    CHECK(bad.err.find("Valid arguments are child, parent.") != std::string::npos);
    CHECK(bad.err.find("\"on\" or \"off\" expected.") != std::string::npos);
    CHECK(bad.out.find("alive") != std::string::npos);
}

namespace {

/// The lines of an `info breakpoints` table (header, rows, detail lines) in `out`.
std::vector<std::string> breakpoint_table(const std::string& out) {
    std::vector<std::string> keep;
    bool in_table = false;
    for (auto& l : lines_of(out)) {
        if (l.rfind("Num     Type", 0) == 0) {
            in_table = true;
        } else if (in_table && !(std::isdigit(static_cast<unsigned char>(l[0])) || (!l.empty() && l[0] == '\t'))) {
            in_table = false;
        }
        if (in_table) {
            keep.push_back(std::regex_replace(l, std::regex("process [0-9]+"), "process N"));
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("catch syscall stops at the call and at the return with gdb's reports", "[cli][catch][syscall]") {
    auto program = example_path("procs");
    std::vector<std::string> cmds{"catch syscall write", "run", "continue", "info breakpoints", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"write"});
    auto gdb = gdb_cmds(program, cmds, {"write"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = catch_lines(gdb.out);
    REQUIRE(expected.size() == 3);   // set, call, return
    CHECK(joined(catch_lines(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "Catchpoint 1 (syscall 'write' [1])"));
    // The program's write happens between the two stops.
    auto call = ours.out.find("(call to syscall write)");
    auto written = ours.out.find("hello from write");
    auto ret = ours.out.find("(returned from syscall write)");
    REQUIRE(call != std::string::npos);
    REQUIRE(ret != std::string::npos);
    CHECK(call < written);
    CHECK(written < ret);
    // Both stops are in the C library's write wrapper with its arguments, as gdb shows (gdb
    // names it by another alias, __GI___libc_write).
    CHECK(std::regex_search(ours.out, std::regex(R"(\(call to syscall write\), .*write \(fd=1, buf=0x[0-9a-f]+, nbytes=17\))")));
    CHECK(std::regex_search(gdb.out, std::regex(R"(\(call to syscall write\), .*write \(fd=1, buf=0x[0-9a-f]+, nbytes=17\))")));
    CHECK(joined(breakpoint_table(ours.out)) == joined(breakpoint_table(gdb.out)));
    CHECK(ours.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("catch syscall with several names and numbers, any syscall, and bad names", "[cli][catch][syscall]") {
    auto program = example_path("procs");
    std::vector<std::string> cmds{"catch syscall write 60 exit_group", "catch syscall", "catch syscall 9999",
                                  "info breakpoints", "catch syscall no_such_call",
                                  "delete 2", "disable 3", "run", "continue", "continue", "info breakpoints"};
    auto ours = ompdbg_cmds(program, cmds, {"write"});
    auto gdb = gdb_cmds(program, cmds, {"write"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(joined(catch_lines(ours.out)) == joined(catch_lines(gdb.out)));
    CHECK(has_line(ours.out, "Catchpoint 1 (syscalls 'write' [1] 'exit' [60] 'exit_group' [231])"));
    CHECK(has_line(ours.out, "Catchpoint 2 (any syscall)"));
    CHECK(ours.err.find("Unknown syscall name 'no_such_call'.") != std::string::npos);
    // Before and after the run: the tables are gdb's, hit counts and disabled rows included.
    CHECK(joined(breakpoint_table(ours.out)) == joined(breakpoint_table(gdb.out)));
    CHECK(ours.out.find("(call to syscall exit_group)") != std::string::npos);
    CHECK(ours.term_signal == 0);
}

TEST_CASE("info breakpoints lists catchpoints and watchpoints with breakpoints, as gdb", "[cli][catch][watch]") {
    auto program = example_path("procs");
    std::vector<std::string> cmds{"break main", "run", "catch fork", "catch exec", "catch vfork",
                                  "rwatch mode", "awatch mode", "info breakpoints", "disable 3 5",
                                  "delete 4", "info breakpoints", "enable 3", "delete 1 6", "continue", "info breakpoints",
                                  "delete", "info breakpoints", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"fork"});
    auto gdb = gdb_cmds(program, cmds, {"fork"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = breakpoint_table(gdb.out);
    REQUIRE(expected.size() > 8);
    CHECK(joined(breakpoint_table(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "No breakpoints or watchpoints."));
    CHECK(has_line(ours.out, "parent: child exited 7"));
}

TEST_CASE("after an exec the breakpoints are planted again in the new program and hit, as gdb", "[cli][catch]") {
    // procs exec execs itself as `procs write`: main runs twice, once per image.
    auto program = example_path("procs");
    std::vector<std::string> cmds{"break main", "run", "continue", "continue"};
    auto ours = ompdbg_cmds(program, cmds, {"exec"});
    auto gdb = gdb_cmds(program, cmds, {"exec"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    auto hits = [](const std::string& out) { return grep(out, R"(^Breakpoint 1, main \()"); };
    REQUIRE(hits(gdb.out).size() == 2);
    CHECK(hits(ours.out).size() == 2);
    CHECK(has_line(ours.out, "hello from write"));
}

TEST_CASE("bt at a syscall stop inside the C library is gdb's: frame #0 mid-line with its pc, callers' parameters "
          "with @entry only where gdb can prove the call",
          "[cli][catch][syscall][bt]") {
    // counter's printf + fflush reach write(2) through libio's indirect calls. In libc's
    // line table the syscall's pc has a row that repeats line 26 after a discriminator: gdb
    // does not record it, so the pc is mid-line. _IO_new_file_write is called through a
    // vtable: its parameters have no entry value gdb could check (no DW_AT_call_origin).
    auto program = example_path("counter");
    std::vector<std::string> cmds{"catch syscall write", "run", "bt", "kill"};
    auto ours = ompdbg_cmds(program, cmds, {"1"});
    auto gdb = gdb_cmds(program, cmds, {"1"});
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // main's argv is on the stack, which moves with the environment (gdb adds LINES and
    // COLUMNS, ompdbg OMP_DEBUG): it is left out.
    auto frames = [](const std::string& out) {
        std::vector<std::string> keep;
        for (auto& l : lines_of(out)) {
            if (l.rfind('#', 0) == 0) {
                keep.push_back(std::regex_replace(l, std::regex("argv=0x[0-9a-f]+"), "argv=ADDR"));
            }
        }
        return keep;
    };
    auto expected = frames(gdb.out);
    REQUIRE(expected.size() >= 4);
    CHECK(std::regex_search(expected[0], std::regex(R"(^#0  0x[0-9a-f]+ in __GI___libc_write \()")));
    CHECK(joined(frames(ours.out)) == joined(expected));
}
