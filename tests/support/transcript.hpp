#pragma once
// Reading what a debugger printed: split into lines, pick lines by pattern, mask what
// legitimately differs between two runs (stack addresses, pids), and run the same commands
// through `ompdbg --batch` and `gdb -batch`. Shared by every end-to-end test.

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ompdbg::test {

/// The lines of `text` without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        out.push_back(l);
    }
    return out;
}

/// The lines joined again, each ending with a newline (for readable CHECK failures).
inline std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& l : v) {
        out += l + "\n";
    }
    return out;
}

/// True when `text` has a line equal to `line`.
inline bool has_line(const std::string& text, const std::string& line) {
    auto ls = lines_of(text);
    return std::find(ls.begin(), ls.end(), line) != ls.end();
}

/// How many lines of `text` start with `prefix`.
inline int count_lines_starting(const std::string& text, const std::string& prefix) {
    int n = 0;
    for (const auto& l : lines_of(text)) {
        if (l.rfind(prefix, 0) == 0) {
            ++n;
        }
    }
    return n;
}

/// Stack addresses depend on the environment a program starts with (gdb and ompdbg pass
/// slightly different ones), so they are masked; code and data addresses are not (both
/// disable ASLR).
inline std::string mask_stack(const std::string& l) {
    static const std::regex stack_addr("0x7ffffff[0-9a-f]{5}");
    return std::regex_replace(l, stack_addr, "0xSTACK");
}

/// The lines of `text` that match `pattern` (std::regex_search), stack addresses masked.
inline std::vector<std::string> grep(const std::string& text, const std::string& pattern) {
    std::vector<std::string> out;
    std::regex re(pattern);
    for (const auto& l : lines_of(text)) {
        if (std::regex_search(l, re)) {
            out.push_back(mask_stack(l));
        }
    }
    return out;
}

/// "-ex C1 -ex C2 ..." for a list of commands.
inline std::vector<std::string> ex_args(const std::vector<std::string>& cmds) {
    std::vector<std::string> args;
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    return args;
}

/// `ompdbg --batch -ex C1 ... [--args] PROGRAM ARGS...` (the commands run in order; as in
/// gdb, words after a plain PROGRAM are a core file or PID, so arguments need --args).
inline run_result ompdbg_cmds(const std::string& program, const std::vector<std::string>& cmds,
                              const std::vector<std::string>& prog_args = {}) {
    auto args = ex_args(cmds);
    if (!prog_args.empty()) {
        args.push_back("--args");
    }
    args.push_back(program);
    args.insert(args.end(), prog_args.begin(), prog_args.end());
    return ompdbg_batch(args, run_options().timeout_after(120s));
}

/// gdb's answer on the same binary: `gdb -nx -batch -ex C1 ... --args PROGRAM ARGS...`
/// (no init files, no debuginfod, pending breakpoints on).
inline run_result gdb_cmds(const std::string& program, const std::vector<std::string>& cmds,
                           const std::vector<std::string>& prog_args = {}) {
    auto args = ex_args(cmds);
    args.push_back("--args");
    args.push_back(program);
    args.insert(args.end(), prog_args.begin(), prog_args.end());
    return gdb_batch(args, run_options().timeout_after(120s));
}

}  // namespace ompdbg::test
