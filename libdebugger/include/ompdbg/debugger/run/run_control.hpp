#pragma once
/// Run control (issue 19: moved from the CLI): resuming the target and waiting for the next
/// stop a user must see. Thread, library and exec events are reported to the session's
/// observer and resumed over, signals that `handle` does not stop for are passed on, forks
/// are followed as follow-fork-mode / detach-on-fork say (run/fork_follow.hpp), and
/// interrupt_running_process() (the CLI's Ctrl-C, the DAP's `pause`) interrupts the wait.
/// What ends a wait is returned; reporting it (a breakpoint hit, a signal) is the caller's.

#include <sys/types.h>

#include <cstdint>
#include <memory>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// What run control needs from parts of the debugger that are still the front end's: the
/// CLI runs the steps of an MPI job's ranks together as fibers and waits for all of them in
/// one loop (apps' mpi_step.cpp), and arms watchpoints (commands_watch.cpp).
class run_control_hooks {
public:
    virtual ~run_control_hooks() = default;
    /// True when a process resumed now is waited for together with others
    /// (wait_with_others then waits): breakpoint hits are not reported early.
    virtual bool waits_with_others() { return false; }
    /// Waits for the next stop of `proc`, resumed, together with the others.
    virtual tracer::stop_reason wait_with_others(tracer::process& proc);
    /// A followed fork child became the current process (detach-on-fork): the watchpoints
    /// go with it (`parent_tid`: the thread that forked; watchpoints on another thread's
    /// locals are deleted).
    virtual void move_watchpoints_to_child(pid_t parent_tid) { (void)parent_tid; }
};

/// Sets the session's hooks (kept until the session ends); without them, processes are
/// waited for alone and watchpoints stay with the parent.
void set_run_control_hooks(session& s, std::unique_ptr<run_control_hooks> hooks);

/// Interrupts the process being waited for (resume_and_wait, step_one_instruction), as
/// Ctrl-C does, and records the request (take_interrupt_request). Async-signal-safe: the
/// CLI calls it from its SIGINT handler.
void interrupt_running_process();
/// Whether an interrupt was requested since the last call (which clears it): a `while`
/// loop of the command language stops there with "Quit", as in gdb.
bool take_interrupt_request();

/// Handles the events that never end a command (new thread, thread exit, library load,
/// exec, signals `handle` passes silently), reporting them to the observer. Returns true
/// when the event was consumed.
bool consume_background_event(session& s, const tracer::stop_reason& why);

/// Resumes every thread and waits for the next event that is not consumed by
/// consume_background_event. Breakpoint hits of other threads in the same stop are reported
/// by the tracer on the following resumes, one at a time (as gdb does). With `quick_hits`
/// (continue), a hit that its thread alone can decide (hit_decidable_alone) is returned
/// with the other threads still running (stop_reason::others_running): the caller stops
/// them if the hit is shown, or resumes it. Forks are followed only inside a
/// follow_forks_scope.
tracer::stop_reason resume_and_wait(session& s, bool quick_hits = false);

/// Single-steps `tid`, consuming background events; the stop (single_step normally).
tracer::stop_reason step_one_instruction(session& s, pid_t tid);

/// True when the hit of `tid` at `addr` can be decided with that thread alone, the others
/// still running (see resume_and_wait's `quick_hits`).
bool hit_decidable_alone(session& s, pid_t tid, std::uint64_t addr);

/// While it lives, resume_and_wait takes over the fork children that follow-fork-mode child
/// or detach-on-fork off keep (`continue`, `run`); outside one (`finish`, `until`, the
/// steps, function calls) the process run is held and fork children are let go.
class follow_forks_scope {
public:
    explicit follow_forks_scope(session& s);
    ~follow_forks_scope();
    follow_forks_scope(const follow_forks_scope&) = delete;
    follow_forks_scope& operator=(const follow_forks_scope&) = delete;

private:
    session& s_;
    bool was_;
};

}  // namespace ompdbg::debugger
