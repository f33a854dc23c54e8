// Small parsing helpers shared by the command files (internal to the app, not a public API).
#pragma once

#include <sys/types.h>

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

/// `s` without leading and trailing white space (a view into `s`).
inline std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

/// `trim(s)` as an owned string.
inline std::string trim_copy(std::string_view s) {
    return std::string(trim(s));
}

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

}  // namespace ompdbg::app
