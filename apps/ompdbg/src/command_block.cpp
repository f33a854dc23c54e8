// Reading and running the bodies of gdb's command language (see command_block.hpp).
#include "command_block.hpp"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "command_args.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

std::string_view first_word(std::string_view line) {
    std::size_t n = 0;
    while (n < line.size() && (std::isalnum(static_cast<unsigned char>(line[n])) || line[n] == '_' || line[n] == '-')) {
        ++n;
    }
    return line.substr(0, n);
}

/// The kind of block `line` opens, if it is the first line of one. Abbreviations count as
/// in gdb (`comm 2` opens a `commands` block), so the word is looked up in the table.
std::optional<block_kind> opens_block(session& s, std::string_view line) {
    std::string word(first_word(line));
    if (word.empty()) {
        return std::nullopt;
    }
    const command* c = nullptr;
    try {
        c = s.commands().find(word);
    } catch (const std::exception&) {
        return std::nullopt;   // ambiguous: not a block either
    }
    if (c == nullptr) {
        return std::nullopt;
    }
    if (c->name == "if") {
        return block_kind::if_block;
    }
    if (c->name == "while") {
        return block_kind::while_block;
    }
    if (c->name == "commands") {
        return block_kind::commands;
    }
    if (c->name == "define") {
        return block_kind::define;
    }
    if (c->name == "document") {
        return block_kind::document;
    }
    return std::nullopt;
}

/// The lines of a body being run, as the source its nested blocks read from.
class lines_source final : public line_source {
public:
    explicit lines_source(const std::vector<std::string>& lines) : lines_(lines) {}
    std::optional<std::string> next_line(std::string_view) override {
        if (next_ >= lines_.size()) {
            return std::nullopt;
        }
        return lines_[next_++];
    }

private:
    const std::vector<std::string>& lines_;
    std::size_t next_ = 0;
};

/// Pops the body's source however the body ends (an error propagates through it).
struct source_scope {
    session& s;
    source_scope(session& ss, line_source& src) : s(ss) { s.push_source(src); }
    ~source_scope() { s.pop_source(); }
    source_scope(const source_scope&) = delete;
    source_scope& operator=(const source_scope&) = delete;
};

}  // namespace

command_block read_block(session& s, block_kind kind, int level) {
    command_block block;
    // The blocks open inside this one, innermost last: a `document` body is text, where
    // only `end` means something.
    std::vector<block_kind> open{kind};
    while (true) {
        auto raw = s.read_body_line(std::string(static_cast<std::size_t>(level) + open.size() - 1, ' ') + ">");
        if (!raw) {
            break;   // end of input closes every block, as in gdb
        }
        std::string_view line = trim(*raw);
        if (line == "end") {
            open.pop_back();
            if (open.empty()) {
                break;
            }
            block.lines.emplace_back(line);
            continue;
        }
        if (open.back() == block_kind::document) {
            std::string_view text = *raw;
            while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
                text.remove_suffix(1);
            }
            if (open.size() > 1) {
                text = line;   // inside a body that is run, lines are trimmed like any other
            }
            block.lines.emplace_back(text);
            continue;
        }
        if (line.empty() || line.front() == '#') {
            continue;
        }
        if (open.size() == 1 && kind == block_kind::if_block && line == "else") {
            if (block.else_at) {
                error::send("Only one \"else\" allowed in an \"if\" command.");
            }
            block.else_at = block.lines.size();
            continue;
        }
        if (auto nested = opens_block(s, line)) {
            open.push_back(*nested);
        }
        block.lines.emplace_back(line);
    }
    return block;
}

void run_lines(session& s, const std::vector<std::string>& lines, const std::function<bool()>& stop) {
    lines_source src(lines);
    run_body(s, src, stop);
}

void run_body(session& s, line_source& src, const std::function<bool()>& stop) {
    source_scope scope(s, src);
    script_state& st = s.script();
    struct depth_scope {
        int& d;
        explicit depth_scope(int& dd) : d(dd) { ++d; }
        ~depth_scope() { --d; }
        depth_scope(const depth_scope&) = delete;
        depth_scope& operator=(const depth_scope&) = delete;
    } depth(st.body_depth);
    while (auto raw = src.next_line({})) {
        std::string line = st.call_args.empty() ? *raw : substitute_args(*raw, st.call_args.back());
        if (trim(line).empty()) {
            continue;   // never Enter's repetition of the last command
        }
        std::string_view word = first_word(trim(line));
        if (st.loop_depth > 0 && (word == "loop_break" || word == "loop_continue")) {
            st.jump = word == "loop_break" ? script_state::loop_jump::break_loop
                                           : script_state::loop_jump::continue_loop;
            return;
        }
        if (st.trace_commands) {
            s.out().line(std::string(static_cast<std::size_t>(std::max(1, st.body_depth - st.trace_base)), '+') +
                         std::string(trim(line)));
        }
        s.execute(line, true);
        if (st.jump != script_state::loop_jump::none || s.quit_requested() || (stop && stop())) {
            return;
        }
    }
}

std::vector<std::string> split_user_args(std::string_view text) {
    std::vector<std::string> args;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
            ++i;
        }
        if (i >= text.size()) {
            break;
        }
        std::size_t start = i;
        bool squote = false, dquote = false, escaped = false;
        while (i < text.size()) {
            char c = text[i];
            if ((c == ' ' || c == '\t') && !squote && !dquote && !escaped) {
                break;
            }
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (squote) {
                squote = c != '\'';
            } else if (dquote) {
                dquote = c != '"';
            } else if (c == '\'') {
                squote = true;
            } else if (c == '"') {
                dquote = true;
            }
            ++i;
        }
        args.emplace_back(text.substr(start, i - start));
    }
    return args;
}

std::string substitute_args(std::string_view line, const std::vector<std::string>& args) {
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        std::size_t p = line.find("$arg", i);
        if (p == std::string_view::npos) {
            break;
        }
        out.append(line.substr(i, p - i));
        std::size_t after = p + 4;
        if (after < line.size() && line[after] == 'c') {
            out += std::to_string(args.size());
            i = after + 1;
            continue;
        }
        std::size_t digits = after;
        while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) {
            ++digits;
        }
        if (digits == after) {
            out += "$arg";   // `$argument` is a convenience variable, left alone
            i = after;
            continue;
        }
        unsigned long n = std::strtoul(std::string(line.substr(after, digits - after)).c_str(), nullptr, 10);
        if (n >= args.size()) {
            error::send(fmt::format("Missing argument {} in user function.", n));
        }
        out += args[n];
        i = digits;
    }
    out.append(line.substr(std::min(i, line.size())));
    return out;
}

}  // namespace ompdbg::app
