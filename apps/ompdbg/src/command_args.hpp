// Small parsing helpers shared by the command files (internal to the app, not a public API).
#pragma once

#include <sys/types.h>

#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/text.hpp"
#include "ompdbg/debugger/session/user_settings.hpp"

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

/// A word of the `run` arguments, and whether it was written plainly (no quote, no
/// backslash): only a plain `>` redirects, as in the shell.
struct typed_word {
    std::string text;
    bool plain = true;
};

/// Splits the `run` arguments like a shell would for simple cases (quotes, spaces).
inline std::vector<typed_word> split_typed_words(std::string_view text) {
    std::vector<typed_word> out;
    typed_word cur;
    bool have = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
                cur.text += text[++i];
            } else {
                cur.text += c;
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
            have = true;
            cur.plain = false;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (have) {
                out.push_back(std::move(cur));
                cur = typed_word{};
                have = false;
            }
        } else if (c == '\\' && i + 1 < text.size()) {
            cur.text += text[++i];
            have = true;
            cur.plain = false;
        } else {
            cur.text += c;
            have = true;
        }
    }
    if (have) {
        out.push_back(std::move(cur));
    }
    return out;
}

/// The words of split_typed_words.
inline std::vector<std::string> split_args(std::string_view text) {
    std::vector<std::string> out;
    for (auto& w : split_typed_words(text)) {
        out.push_back(std::move(w.text));
    }
    return out;
}

/// The program's arguments as typed after `run` or `set args`: its words, and the
/// redirections gdb's shell would carry out (`< IN`, `> OUT`, `>> OUT`, `2> ERR`, `2>> ERR`,
/// `2>&1`, the file name attached or the next word). Throws for an operator without a file.
struct run_arguments {
    std::vector<std::string> words;
    debugger::program_redirections redirections;
};

inline run_arguments parse_run_arguments(std::string_view text) {
    run_arguments out;
    auto words = split_typed_words(text);
    for (std::size_t i = 0; i < words.size(); ++i) {
        const typed_word& w = words[i];
        std::string_view t = w.text;
        if (w.plain && t == "2>&1") {
            out.redirections.err_to_out = true;
            out.redirections.err.reset();
            continue;
        }
        std::optional<std::string>* target = nullptr;
        bool* append = nullptr;
        std::string_view op;
        for (std::string_view candidate : {"2>>", "2>", ">>", ">", "<"}) {
            if (w.plain && t.starts_with(candidate)) {
                op = candidate;
                break;
            }
        }
        if (op.empty()) {
            out.words.push_back(w.text);
            continue;
        }
        auto& r = out.redirections;
        if (op == "<") {
            target = &r.in;
        } else if (op.starts_with("2")) {
            target = &r.err;
            append = &r.err_append;
            r.err_to_out = false;
        } else {
            target = &r.out;
            append = &r.out_append;
        }
        std::string file(t.substr(op.size()));
        if (file.empty()) {
            if (i + 1 >= words.size()) {
                error::send(fmt::format("Missing file name after `{}'.", op));
            }
            file = words[++i].text;
        }
        *target = file;
        if (append != nullptr) {
            *append = op.ends_with(">>");
        }
    }
    return out;
}

}  // namespace ompdbg::app
