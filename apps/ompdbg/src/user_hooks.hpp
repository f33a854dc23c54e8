#pragma once
/// gdb's hooks: a user command named `hook-CMD` runs before CMD, one named `hookpost-CMD`
/// after it (not when CMD fails), and `hook-stop` at every stop shown to the user, before
/// the stop is printed. As in gdb a hook is tied to its command when it is defined (a hook
/// of a command that does not exist yet hooks nothing, after a warning), survives the
/// command's redefinition, and does not run inside itself.

#include <string>

#include "command_table.hpp"

namespace ompdbg::app {

class session;

/// Called by `define NAME` before NAME is made: when NAME is `hook-CMD` or `hookpost-CMD`,
/// ties it to CMD (wrapping CMD's handler), or warns that it hooks nothing and asks
/// gdb's "Proceed? " (throws "Not confirmed." on no).
void tie_hook(session& s, const std::string& name);

/// `handler` of command `name`, running the hooks tied to `name` around it.
command_handler with_hooks(std::string name, command_handler handler);

/// Runs `hook-stop`, if defined, where a stop is about to be shown; its error is printed
/// as gdb's "Error while running hook_stop:" and the stop goes on.
void run_stop_hook(session& s);

}  // namespace ompdbg::app
