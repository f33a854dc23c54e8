#pragma once
/// What the debugger does with each signal (gdb's `handle` table: stop, print, pass) and
/// the process-event settings of the daily-driver commands (follow-fork-mode,
/// detach-on-fork, caught syscalls / fork / exec).

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::app {

/// One row of gdb's signal table, in gdb's order (its own numbering, not the host's).
struct signal_row {
    std::string name;         ///< "SIGSEGV", "SIG34", "EXC_BREAKPOINT"
    int host = 0;             ///< Linux signal number, 0 when Linux has none
    bool stop = true, print = true, pass = true;
    std::string description;  ///< "Segmentation fault"
};

class signal_policy {
public:
    signal_policy();   ///< gdb 13's defaults

    const std::vector<signal_row>& rows() const { return rows_; }
    /// The row of a gdb name ("SIGUSR1", case-insensitive), or of a number 1-15 in gdb's own
    /// numbering (its table order: 10 is SIGBUS); nullptr if none.
    signal_row* find(std::string_view word);
    /// The row of a Linux signal number; nullptr if gdb has no name for it.
    const signal_row* for_host(int signo) const;

    bool stops(int signo) const;
    bool prints(int signo) const;
    bool passes(int signo) const;

private:
    std::vector<signal_row> rows_;
};

/// gdb's `follow-fork-mode`, `detach-on-fork` and the catchpoints on process events.
struct process_event_settings {
    bool follow_child = false;       ///< follow-fork-mode child
    bool detach_on_fork = true;
};

}  // namespace ompdbg::app
