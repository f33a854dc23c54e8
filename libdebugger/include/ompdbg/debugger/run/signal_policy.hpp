#pragma once
/// What the debugger does with each signal (gdb's `handle` table: stop, print, pass) and
/// the process-event settings of the daily-driver commands (follow-fork-mode,
/// detach-on-fork, caught syscalls / fork / exec).

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::debugger {

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

/// A catchpoint on a process event (`catch fork|vfork|exec|syscall`). Numbered with the
/// breakpoints; kept apart from them (they have no address to resolve).
struct event_catchpoint {
    int number = 0;
    std::string what;                ///< "fork", "vfork", "exec", "syscall"
    int hit_count = 0;
    bool enabled = true;
    std::vector<int> syscalls;       ///< catch syscall: the numbers (empty: any system call)
    std::string last_event;          ///< what the last hit caught ("process 1234"), for info breakpoints

    /// True for a syscall catchpoint that catches system call `number`.
    bool catches_syscall(int number) const {
        return what == "syscall" &&
               (syscalls.empty() || std::find(syscalls.begin(), syscalls.end(), number) != syscalls.end());
    }
};

/// gdb's `follow-fork-mode`, `detach-on-fork` and the catchpoints on process events.
struct process_event_settings {
    bool follow_child = false;       ///< follow-fork-mode child
    bool detach_on_fork = true;
    std::vector<event_catchpoint> catchpoints;

    /// The enabled catchpoint for `what`, nullptr if none.
    event_catchpoint* find(std::string_view what) {
        for (auto& c : catchpoints) {
            if (c.enabled && c.what == what) {
                return &c;
            }
        }
        return nullptr;
    }
    /// The catchpoint with `number`, nullptr if none.
    event_catchpoint* by_number(int number) {
        for (auto& c : catchpoints) {
            if (c.number == number) {
                return &c;
            }
        }
        return nullptr;
    }
    /// The system calls the enabled syscall catchpoints want (process::set_syscall_catch):
    /// nullopt none, empty any.
    std::optional<std::vector<int>> syscall_filter() const {
        std::optional<std::vector<int>> out;
        for (const auto& c : catchpoints) {
            if (!c.enabled || c.what != "syscall") {
                continue;
            }
            if (c.syscalls.empty()) {
                return std::vector<int>{};
            }
            if (!out) {
                out.emplace();
            }
            out->insert(out->end(), c.syscalls.begin(), c.syscalls.end());
        }
        return out;
    }
};

}  // namespace ompdbg::debugger
