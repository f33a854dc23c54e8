#pragma once
/// Why a target stopped, built once from a wait status and siginfo (LLDB's one switch).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/base/addr.hpp"

namespace ompdbg::tracer {

enum class stop_kind {
    breakpoint,       ///< a user-visible breakpoint site was hit (pc already rewound to it)
    single_step,      ///< step_instruction finished
    signal,           ///< the thread received a signal (`signo`), e.g. SIGSEGV, SIGINT
    exited,           ///< the process exited normally (`exit_code`)
    terminated,       ///< the process was killed by a signal (`signo`)
    thread_created,   ///< a new thread appeared (`new_tid`)
    thread_exited,    ///< a thread (not the last) exited
    library_event,    ///< shared libraries were loaded or unloaded (modules re-read)
    exec,             ///< the process called execve
    fork,             ///< the thread forked (`new_tid`: the child, already detached; `is_vfork`);
                      ///< reported only after process::set_report_forks(true)
    interrupted,      ///< interrupt() stopped it (Ctrl-C)
    watchpoint,       ///< a watchpoint triggered (`watchpoint_id`); the access has completed
    syscall_entry,    ///< a caught system call is entered (`syscall_number`); see set_syscall_catch
    syscall_exit,     ///< a caught system call returned (`syscall_number`)
};

struct stop_reason {
    stop_kind kind = stop_kind::signal;
    pid_t tid = 0;                  ///< the thread the event belongs to
    int exit_code = 0;              ///< exited
    int signo = 0;                  ///< signal / terminated
    int si_code = 0;
    std::optional<virt_addr> fault_addr;      ///< siginfo si_addr for SIGSEGV/SIGBUS/SIGFPE
    std::optional<virt_addr> breakpoint_addr; ///< breakpoint: the site's address
    pid_t new_tid = 0;              ///< thread_created; fork: the child's pid
    bool is_vfork = false;          ///< fork: through vfork()
    int watchpoint_id = 0;          ///< watchpoint: process::add_watchpoint's id
    int syscall_number = -1;        ///< syscall_entry/syscall_exit: the x86-64 number
    /// watchpoint: the address accessed (software: the faulting address; hardware: the
    /// watched address of the debug register that triggered).
    std::optional<virt_addr> watch_addr;
    /// Other threads that hit a breakpoint in the same stop (all-stop); the app reports
    /// them later, as gdb does, so that none skips a breakpoint.
    std::vector<pid_t> other_breakpoint_tids;
    /// breakpoint, thread_created, thread_exited: reported before the other threads were
    /// stopped (process::set_early_breakpoint_reports); they may still be running, and so
    /// may a new thread's creator (process::set_resume_creators_early).
    bool others_running = false;
    /// terminated: not an end of the process, but the loss of the agent that reached it
    /// on its host (remote processes: the agent or its connection died); why, in one line.
    bool connection_lost = false;
    std::string lost_reason;

    bool is_process_end() const { return kind == stop_kind::exited || kind == stop_kind::terminated; }
};

}  // namespace ompdbg::tracer
