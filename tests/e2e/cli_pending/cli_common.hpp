#pragma once
// Shared helpers of the cli_* end-to-end tests: run ompdbg and gdb with the same commands
// on the same binary, drop the lines only one of them prints, and compare.

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ompdbg::test::cli {

/// The line number of `LINE-MARK: <mark>` in an example's source file.
inline int mark_line(const std::string& source, const std::string& mark) {
    std::ifstream in(std::string(examples_source_dir) + "/" + source);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        auto pos = text.find("LINE-MARK: " + mark);
        if (pos != std::string::npos) {
            auto end = pos + 11 + mark.size();
            if (end == text.size() || text[end] == ' ' || text[end] == '*') {
                return n;
            }
        }
    }
    return 0;
}

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

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        out.push_back(l);
    }
    return out;
}

inline bool has_line(const std::string& text, const std::string& line) {
    auto ls = lines_of(text);
    return std::find(ls.begin(), ls.end(), line) != ls.end();
}

inline int count_lines_starting(const std::string& text, const std::string& prefix) {
    int n = 0;
    for (auto& l : lines_of(text)) {
        if (l.rfind(prefix, 0) == 0) {
            ++n;
        }
    }
    return n;
}

inline std::vector<std::string> ex_args(const std::vector<std::string>& cmds) {
    std::vector<std::string> args;
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    return args;
}

/// `ompdbg --batch -ex C1 ... PROGRAM ARGS...`.
inline run_result ompdbg_cmds(const std::string& program, const std::vector<std::string>& cmds,
                              const std::vector<std::string>& prog_args = {}) {
    auto args = ex_args(cmds);
    args.push_back(program);
    args.insert(args.end(), prog_args.begin(), prog_args.end());
    return ompdbg_batch(args, run_options().timeout_after(60s));
}

/// gdb's answer on the same binary: `gdb -nx -batch -ex C1 ... --args PROGRAM ARGS...`.
inline run_result gdb_cmds(const std::string& program, const std::vector<std::string>& cmds,
                           const std::vector<std::string>& prog_args = {}) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off"};
    auto ex = ex_args(cmds);
    argv.insert(argv.end(), ex.begin(), ex.end());
    argv.push_back("--args");
    argv.push_back(program);
    argv.insert(argv.end(), prog_args.begin(), prog_args.end());
    return run(argv, run_options().timeout_after(60s));
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
        keep.push_back(l);
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

inline std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (auto& l : v) {
        s += l + "\n";
    }
    return s;
}

}  // namespace ompdbg::test::cli
