#pragma once
/// What gdb's command language remembers while scripts run (commands_script.cpp,
/// command_block.cpp): the user-defined commands, the arguments of the user commands
/// running, and a pending loop_break / loop_continue.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ompdbg::app {

struct script_state {
    /// A loop_break or loop_continue seen in a body: the lines after it are skipped up to
    /// the enclosing `while`, which then ends or starts its next iteration.
    enum class loop_jump { none, break_loop, continue_loop };
    loop_jump jump = loop_jump::none;
    int loop_depth = 0;                      ///< `while` loops running
    /// The arguments of each user command running, innermost last ($arg0, $argc).
    std::vector<std::vector<std::string>> call_args;
    /// The commands made by `define`, by name: their bodies (`show user` prints them).
    std::map<std::string, std::shared_ptr<const std::vector<std::string>>> user_commands;
    int body_depth = 0;                      ///< bodies running (run_body), nested
    /// `source -v`: each command is shown before it runs, "+" once per nesting level
    /// below `trace_base` (the depth the traced file started at).
    bool trace_commands = false;
    int trace_base = 0;
    /// gdb's max-user-call-depth: a user command calling itself ends with an error there
    /// (`set max-user-call-depth`; 0: unlimited).
    unsigned max_call_depth = 1024;
    /// gdb's hooks (user_hooks.hpp): the hooked command's name ("stop" for hook-stop) to
    /// its hook's, `hook-CMD` before and `hookpost-CMD` after.
    std::map<std::string, std::string> pre_hooks, post_hooks;
    /// Commands whose handler runs their hooks (wrapped once), and those whose hook is
    /// running now (it does not run inside itself).
    std::set<std::string> hooked, hooks_running;
    /// The prefix commands define-prefix made or marked, by full name ("abc", "abc xyz").
    std::set<std::string> user_prefixes;
    /// Where the outermost user command's frame is on our own stack: nested calls stop
    /// with the same error before they use half the stack (a sanitizer build's frames are
    /// several times larger than a release build's).
    std::uintptr_t stack_base = 0;
};

}  // namespace ompdbg::app
