#pragma once
/// The command sources of main(): the terminal/stdin (a plain getline loop for now; line
/// editing will plug in behind the same interface), a -x file, the -ex list.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

/// Lines from stdin; prints the prompt when `show_prompt` (not in JSON mode).
class stdin_source final : public line_source {
public:
    stdin_source(bool show_prompt, bool interactive) : show_prompt_(show_prompt), interactive_(interactive) {}
    std::optional<std::string> next_line(std::string_view prompt) override {
        if (show_prompt_) {
            std::fwrite(prompt.data(), 1, prompt.size(), stdout);
            std::fflush(stdout);
        }
        std::string line;
        if (!std::getline(std::cin, line)) {
            if (show_prompt_) {
                std::fputs("quit\n", stdout);   // gdb echoes the implied command at EOF
                std::fflush(stdout);
            }
            return std::nullopt;
        }
        return line;
    }
    bool is_interactive() const override { return interactive_; }

private:
    bool show_prompt_;
    bool interactive_;
};

/// The lines of a command file (-x FILE). Throws when the file cannot be opened.
class file_source final : public line_source {
public:
    explicit file_source(const std::string& path) : path_(path), in_(path) {
        if (!in_) {
            error::send_errno(path);
        }
    }
    std::optional<std::string> next_line(std::string_view) override {
        std::string line;
        if (!std::getline(in_, line)) {
            return std::nullopt;
        }
        ++line_number_;
        return line;
    }
    std::string where() const override { return path_ + ":" + std::to_string(line_number_); }

private:
    std::string path_;
    std::ifstream in_;
    int line_number_ = 0;
};

/// A list of lines (consecutive -ex arguments).
class list_source final : public line_source {
public:
    explicit list_source(std::vector<std::string> lines) : lines_(std::move(lines)) {}
    std::optional<std::string> next_line(std::string_view) override {
        if (next_ >= lines_.size()) {
            return std::nullopt;
        }
        return lines_[next_++];
    }

private:
    std::vector<std::string> lines_;
    std::size_t next_ = 0;
};

}  // namespace ompdbg::app
