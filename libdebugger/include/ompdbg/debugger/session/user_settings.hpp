#pragma once
/// The user's settings that change what the debugger does (gdb's `set ...`).

#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

/// The redirections of the program's arguments as typed (`run < in > out 2>&1`), which gdb's
/// shell carries out: applied when the program is started on this host.
struct program_redirections {
    std::optional<std::string> in, out, err;
    bool out_append = false, err_append = false;
    bool err_to_out = false;   ///< 2>&1
    bool operator==(const program_redirections&) const = default;
};

/// gdb's user settings that change what ompdbg does (`set confirm`, `set listsize`,
/// `set print elements|repeats|pretty`), and the ones gdb scripts set that ompdbg honours by
/// construction (it neither pages nor wraps: `set pagination`, `set width`, `set height`).
struct user_settings {
    bool confirm = true;
    int listsize = 10;
    dwarf::format_options print;   ///< letter stays natural; print/FMT overrides it per command
    bool pagination = true;
    std::optional<unsigned> width, height;   ///< nullopt: unlimited
    std::string args_text;   ///< the program's arguments as last written (`show args` repeats them)
    program_redirections redirections;   ///< those written with them (`run ARGS`, `set args ARGS`)
    std::optional<bool> breakpoint_pending;   ///< `set breakpoint pending on|off|auto` (nullopt: auto, ask)
    std::optional<bool> breakpoint_fast;      ///< `set breakpoint fast on|off` (nullopt: OMPDBG_FAST_BREAKPOINTS, on)
    bool may_call_functions = true;   ///< `set may-call-functions`
    bool unwind_on_signal = false;    ///< `set unwindonsignal`: restore a signalled call's caller
    std::string remote_shell;                 ///< `set remote-shell` (empty: OMPDBG_RSH or ssh; remote_ranks.hpp)
    std::vector<std::string> local_hosts;     ///< `set mpi-local-hosts`: more names of this machine
    std::optional<unsigned> mpi_spawn_timeout = 30;   ///< `set mpi-spawn-timeout`: seconds an attach waits
                                                      ///< for a starter still starting its tasks (nullopt:
                                                      ///< unlimited, until Ctrl-C)
    std::string remote_exec_file;             ///< `set remote exec-file`: what `run` over extended-remote
                                              ///< starts on the agent's host (empty: the program's path)
};

}  // namespace ompdbg::debugger
