#pragma once
/// The interactive prompt: a line editor (BSD libedit through its readline-compatible
/// API) with history kept across sessions and tab completion from `complete_line`.
/// libedit rather than GNU readline: readline is GPL-3, which would make every
/// distributed ompdbg binary GPL-3; libedit is BSD-licensed and Debian ships both.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "session.hpp"

namespace ompdbg::app {

/// The history file: $OMPDBG_HISTFILE, else ~/.ompdbg_history (gdb keeps ~/.gdb_history
/// the same way). Empty when there is no home directory.
std::filesystem::path history_file_path();

/// Lines typed at a terminal, with editing, history and completion. One at a time: the
/// line editor is process-global state.
class line_editor final : public line_source {
public:
    /// Loads the history file; completion is answered from `s`.
    explicit line_editor(session& s);
    /// Writes the history file back (at most 1000 lines, as gdb's default history size).
    ~line_editor() override;
    line_editor(const line_editor&) = delete;
    line_editor& operator=(const line_editor&) = delete;

    /// Shows `prompt`, reads one edited line; nullopt at end of input (Ctrl-D), after
    /// echoing "quit" as gdb does. Non-empty lines different from the previous one go into
    /// the history.
    std::optional<std::string> next_line(std::string_view prompt) override;
    bool is_interactive() const override { return true; }

private:
    session& session_;
    std::filesystem::path history_;
    std::string last_added_;
};

}  // namespace ompdbg::app
