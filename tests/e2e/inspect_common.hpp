#pragma once
// Helpers of the inspect_* end-to-end tests on top of tests/support/transcript.hpp: the
// parts of a transcript they compare with gdb's.

#include "transcript.hpp"

#include <regex>
#include <string>
#include <vector>

namespace ompdbg::test::inspect {

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

}  // namespace ompdbg::test::inspect
