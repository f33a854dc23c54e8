#pragma once
// Shared helpers of the cli_* end-to-end tests: run ompdbg and gdb with the same commands
// on the same binary, drop the lines only one of them prints, and compare.

#include <catch2/catch.hpp>

#include "transcript.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace ompdbg::test::cli {

// The transcript helpers moved to tests/support/transcript.hpp; these names keep working
// for tests that spell them cli::...
using ompdbg::test::count_lines_starting;
using ompdbg::test::ex_args;
using ompdbg::test::gdb_cmds;
using ompdbg::test::has_line;
using ompdbg::test::joined;
using ompdbg::test::lines_of;
using ompdbg::test::ompdbg_cmds;

/// The text of line `n` of an example's source, as a debugger prints it ("82\t    if ...").
inline std::string source_line(const std::string& source, int n) {
    std::ifstream in(std::string(examples_source_dir) + "/" + source);
    std::string text;
    for (int i = 1; std::getline(in, text); ++i) {
        if (i == n) {
            return std::to_string(n) + "\t" + text;
        }
    }
    return {};
}

/// Whether `line` is the tail of a thread event ("[New Thread 0x7ffff649dcc0 (LWP 4711)]")
/// that the program's own output cut in two: gdb writes "[New ", the thread and "]" apart,
/// so under load a line of the program's can land after "[New " or before "]". The head
/// starts with "[" and goes with the events; this matches what is left ("Thread 0x... (LWP
/// 4711)]", " exited]" or "]").
inline bool thread_event_tail(const std::string& line) {
    static const std::regex tail(R"(^(Thread 0x\w+ \(LWP [0-9]+\))?( exited)?\]$)");
    return std::regex_match(line, tail);
}

/// The lines a user sees from the debugger itself, without what only gdb prints about
/// libthread_db and without the program's own output (given as `program_lines`).
inline std::vector<std::string> debugger_lines(const std::string& out,
                                               const std::vector<std::string>& program_lines = {}) {
    std::vector<std::string> keep;
    for (auto& l : lines_of(out)) {
        if (l.rfind("[Thread debugging using libthread_db", 0) == 0 || l.rfind("Using host libthread_db", 0) == 0) {
            continue;
        }
        if (std::find(program_lines.begin(), program_lines.end(), l) != program_lines.end()) {
            continue;
        }
        // Each debugger runs its own process: "[Inferior 1 (process 4711) exited normally]".
        static const std::regex pid("\\(process [0-9]+\\)");
        // Stack addresses move with the environment, which differs between the tools.
        keep.push_back(mask_stack(std::regex_replace(l, pid, "(process PID)")));
    }
    return keep;
}

/// What the program prints on its own (run without a debugger): its lines are dropped from
/// both transcripts (buffering decides where they land).
inline std::vector<std::string> program_output(const std::string& program, const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    return lines_of(run(argv, run_options().timeout_after(30s)).out);
}

/// Runs `cmds` on `program` in ompdbg and in gdb and checks that the debuggers print the same
/// lines (debugger_lines); `drop_events` also drops the bracketed thread events ("[New
/// Thread 0x7ffff7dce6c0 (LWP 4711)]"), whose addresses and LWPs differ between the runs.
inline void compare_with_gdb(const std::string& program, const std::vector<std::string>& cmds,
                             bool drop_events = false) {
    auto prog_lines = program_output(program);
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO("program: " << program);
    INFO("ompdbg stdout:\n" << ours.out << "\nompdbg stderr:\n" << ours.err);
    INFO("gdb stdout:\n" << theirs.out << "\ngdb stderr:\n" << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    auto keep = [&](const std::string& out) {
        std::vector<std::string> lines;
        for (auto& l : debugger_lines(out, prog_lines)) {
            if (!(drop_events && (l.rfind("[", 0) == 0 || thread_event_tail(l)))) {
                lines.push_back(l);
            }
        }
        return joined(lines);
    };
    // ompdbg evaluates a condition in the target where it can (issue 21) and says so in
    // `info breakpoints` as gdb does for a target-side condition; native gdb evaluates
    // every condition itself and prints no such note.
    auto ours_out = std::regex_replace(ours.out, std::regex(" \\((target|host) evaluation[^)]*\\)"), "");
    CHECK(keep(ours_out) == keep(theirs.out));
}

}  // namespace ompdbg::test::cli
