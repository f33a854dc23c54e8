#pragma once
/// gdb's command language, the part shared by every command with a body (`commands`,
/// `define`, `document`, `if`, `while`): reading a block up to its `end`, and running the
/// lines of a body (user-command arguments, loop_break / loop_continue, errors that end
/// the whole body).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session.hpp"

namespace ompdbg::app {

enum class block_kind { commands, define, document, if_block, while_block };

/// A block read up to its `end`.
struct command_block {
    std::vector<std::string> lines;       ///< the body; nested blocks keep their own `end`
    std::optional<std::size_t> else_at;   ///< `if`: where the `else` part starts in `lines`
};

/// Reads the body of the block that the running command opens, from the source that
/// command came from: lines up to the `end` that closes it, the blocks nested inside
/// (`if`, `while`, `commands`, `define`, `document`) keeping their own `end`. Lines are
/// trimmed; blank lines and comments are dropped (a `document` keeps its lines as typed,
/// without trailing blanks). End of input closes the block, as in gdb. A terminal shows
/// gdb's prompt: `level` blanks and ">", one more blank per nested block.
command_block read_block(session& s, block_kind kind, int level);

/// Runs `lines` as the body of a user command, an `if` branch, a `while` iteration or a
/// breakpoint's commands: commands with bodies read them from `lines`. The first error
/// ends the body and propagates (gdb ends the whole user command up to the top level);
/// the body also ends after a loop_break / loop_continue, or a line after which `stop`
/// returns true (a breakpoint command that resumed the program).
void run_lines(session& s, const std::vector<std::string>& lines, const std::function<bool()>& stop = {});
/// run_lines over any source (`source FILE` runs a file's lines so).
void run_body(session& s, line_source& src, const std::function<bool()>& stop = {});

/// One user command: `body` run with `args` ($arg0.., $argc), one level deeper; throws
/// "Max user call depth exceeded -- command aborted." past max-user-call-depth
/// (commands_script.cpp).
void run_user_command(session& s, const std::vector<std::string>& body, std::string_view args);

/// The arguments of a user command as gdb splits them: at blanks outside quotes, a
/// backslash escaping the next character; quotes stay in the arguments.
std::vector<std::string> split_user_args(std::string_view text);

/// `line` with `$argc` and `$argN` replaced by the count and the arguments (gdb's
/// insert_user_defined_cmd_args). Throws "Missing argument N in user function.".
std::string substitute_args(std::string_view line, const std::vector<std::string>& args);

}  // namespace ompdbg::app
