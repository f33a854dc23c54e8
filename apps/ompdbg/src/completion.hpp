#pragma once
/// Tab completion at the prompt, independent of the line editor: given the line up to the
/// cursor, the candidates for the word being typed. Command names come from the command
/// table (sub-commands after a prefix command such as `info`), symbol names after
/// break/print/list and their kin, file names after run/file.

#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::app {

class session;

/// Characters that end the word being completed (the line editor splits at the same
/// ones): blanks and C operators, but not '/', '.', '-' and ':' so that paths, FILE:LINE
/// and ns::name complete as one word.
inline constexpr const char* completion_word_breaks = " \t\n\"'`@$><=;|&{(+*,[]!~%^";

/// The word being completed: the end of `line` after the last break character.
std::string_view completion_word(std::string_view line);

/// What the word under the cursor is completed against.
enum class completion_kind { command, symbol, file, none };

struct completion {
    completion_kind kind = completion_kind::none;
    /// Sorted, without duplicates, each starting with the word being completed. Empty for
    /// `file` (the line editor's own file-name completion does that).
    std::vector<std::string> candidates;
};

/// Completes the last word of `line` (the text before the cursor). Never throws: a
/// command line that does not parse yet completes to nothing.
completion complete_line(session& s, std::string_view line);

}  // namespace ompdbg::app
