#pragma once
/// White space trimming shared by the layers that parse what users type (command
/// arguments, location specs, rank lists).

#include <cctype>
#include <string>
#include <string_view>

namespace ompdbg {

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

}  // namespace ompdbg
