// Small parsing helpers shared by the command files (internal to the app, not a public API).
#pragma once

#include <sys/types.h>

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/text.hpp"

namespace ompdbg::app {

using ompdbg::trim;
using ompdbg::trim_copy;

/// The process id of `attach PID` (decimal, or 0x.. hex as gdb accepts); throws gdb's
/// "Illegal process-id: ARG." for anything else.
inline pid_t parse_process_id(std::string_view args) {
    std::string a = trim_copy(args);
    try {
        std::size_t used = 0;
        long pid = std::stol(a, &used, 0);
        if (used == a.size() && pid > 0 && pid <= 0x7fffffffL) {
            return static_cast<pid_t>(pid);
        }
    } catch (const std::logic_error&) {
    }
    error::send(fmt::format("Illegal process-id: {}.", a));
}

/// `text` as a whole decimal int (`thread 3`, `inferior 2`); throws "Invalid WHAT ID: TEXT"
/// (gdb's words) for anything else, "3x" included.
inline int parse_id_number(const std::string& text, std::string_view what) {
    try {
        std::size_t used = 0;
        int n = std::stoi(text, &used);
        if (used == text.size()) {
            return n;
        }
    } catch (const std::logic_error&) {
    }
    error::send(fmt::format("Invalid {} ID: {}", what, text));
}

/// gdb's boolean setting values: on/off, 1/0, yes/no, enable/disable; empty means on.
inline bool parse_on_off(std::string_view args) {
    std::string a(trim(args));
    if (a.empty() || a == "on" || a == "1" || a == "yes" || a == "enable") {
        return true;
    }
    if (a == "off" || a == "0" || a == "no" || a == "disable") {
        return false;
    }
    error::send("\"on\" or \"off\" expected.");
}

/// Splits the `run` arguments like a shell would for simple cases (quotes, spaces).
inline std::vector<std::string> split_args(std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    bool have = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
                cur += text[++i];
            } else {
                cur += c;
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
            have = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (have) {
                out.push_back(cur);
                cur.clear();
                have = false;
            }
        } else if (c == '\\' && i + 1 < text.size()) {
            cur += text[++i];
            have = true;
        } else {
            cur += c;
            have = true;
        }
    }
    if (have) {
        out.push_back(cur);
    }
    return out;
}

}  // namespace ompdbg::app
