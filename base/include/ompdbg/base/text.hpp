#pragma once
/// White space trimming and clause splitting shared by the layers that parse what users
/// type (command arguments, location specs, rank lists).

#include <cctype>
#include <optional>
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

/// A trailing "KEYWORD TOKEN" of what a user typed (`break LOC thread 2`, `rank 0-3`).
struct trailing_clause {
    std::string before;   ///< the text before KEYWORD, its trailing blanks dropped
    std::string token;    ///< the last word
};

/// Splits `text` when it ends with KEYWORD, blanks and one word (no blank after it), where
/// KEYWORD starts a word (at the start or after a character that is not a letter, digit
/// or '_'); nullopt otherwise. `foo thread 2` -> {"foo", "2"}; `foothread 2` -> nullopt.
inline std::optional<trailing_clause> split_trailing_clause(std::string_view text, std::string_view keyword) {
    auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    std::size_t token = text.size();
    while (token > 0 && !blank(text[token - 1])) {
        --token;
    }
    if (token == text.size() || token == 0) {
        return std::nullopt;   // no last word, or nothing but it
    }
    std::size_t end = token;
    while (end > 0 && blank(text[end - 1])) {
        --end;
    }
    if (end < keyword.size() || text.substr(end - keyword.size(), keyword.size()) != keyword) {
        return std::nullopt;
    }
    std::size_t start = end - keyword.size();
    if (start > 0) {
        unsigned char before = static_cast<unsigned char>(text[start - 1]);
        if (std::isalnum(before) != 0 || before == '_') {
            return std::nullopt;   // the end of a longer word (`foothread`)
        }
    }
    std::string_view head = text.substr(0, start);
    while (!head.empty() && blank(head.back())) {
        head.remove_suffix(1);
    }
    return trailing_clause{std::string(head), std::string(text.substr(token))};
}

}  // namespace ompdbg
