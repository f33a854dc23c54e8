#pragma once
// Shared helpers of the inspect_* end-to-end tests: run the same commands through
// `ompdbg --batch` and `gdb -batch` on the same binary, and pick the lines to compare.

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ompdbg::test::inspect {

/// The line number of `LINE-MARK: <mark>` in an example's source file.
inline int mark_line(const std::string& source, const std::string& mark) {
    std::ifstream in(std::string(examples_source_dir) + "/" + source);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (text.find("LINE-MARK: " + mark) != std::string::npos &&
            text.find("LINE-MARK: " + mark + "_") == std::string::npos) {
            return n;
        }
    }
    return 0;
}

/// `ompdbg --batch -ex C1 -ex C2 ... PROGRAM` (the commands run in order).
inline run_result ompdbg_cmds(const std::string& program, const std::vector<std::string>& cmds) {
    std::vector<std::string> args;
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    args.push_back(program);
    return ompdbg_batch(args, run_options().timeout_after(60s));
}

/// gdb's answer: `gdb -nx -batch -ex C1 ... PROGRAM` (no init files, no debuginfod).
inline run_result gdb_cmds(const std::string& program, const std::vector<std::string>& cmds) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off",
                                  "-ex", "set breakpoint pending on"};
    for (const auto& c : cmds) {
        argv.push_back("-ex");
        argv.push_back(c);
    }
    argv.push_back(program);
    return run(argv, run_options().timeout_after(60s));
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

/// Stack addresses depend on the environment the program starts with (gdb and ompdbg
/// pass slightly different ones), so they are masked; code and data addresses are not
/// (both disable ASLR).
inline std::string mask_stack(const std::string& l) {
    static const std::regex stack_addr("0x7ffffff[0-9a-f]{5}");
    return std::regex_replace(l, stack_addr, "0xSTACK");
}

/// The lines of `text` that match `pattern`, stack addresses masked.
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

/// Frame lines ("#N  ...") with the argument list replaced by "(...)" (for -O2, where
/// gdb prints entry values "n=n@entry=10" that we do not reproduce).
inline std::vector<std::string> frames_without_args(const std::string& text) {
    std::vector<std::string> out;
    static const std::regex args(R"( \(.*\) (at|from) )");
    static const std::regex args_end(R"( \(.*\)$)");
    for (auto l : grep(text, "^#[0-9]+ ")) {
        l = std::regex_replace(l, args, " (...) $1 ");
        l = std::regex_replace(l, args_end, " (...)");
        out.push_back(l);
    }
    return out;
}

/// The text between the line matching `first` and the next line that does not start
/// with a space (a multi-line block such as `info frame` or `ptype`).
inline std::vector<std::string> block(const std::string& text, const std::string& first) {
    std::vector<std::string> out;
    bool in = false;
    std::regex re(first);
    for (const auto& l : lines_of(text)) {
        if (!in && std::regex_search(l, re)) {
            in = true;
            out.push_back(mask_stack(l));
            continue;
        }
        if (in) {
            if (l.empty() || (l[0] != ' ' && l[0] != '}')) {
                break;
            }
            out.push_back(mask_stack(l));
            if (l[0] == '}') {
                break;
            }
        }
    }
    return out;
}

inline std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& l : v) {
        out += l + "\n";
    }
    return out;
}

}  // namespace ompdbg::test::inspect
