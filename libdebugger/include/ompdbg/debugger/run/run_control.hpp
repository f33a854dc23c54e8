#pragma once
/// Run control (issue 19: moved from the CLI): resuming the target and waiting for the next
/// stop a user must see. Thread, library and exec events are reported to the session's
/// observer and resumed over, signals that `handle` does not stop for are passed on, forks
/// are followed as follow-fork-mode / detach-on-fork say (run/fork_follow.hpp), and
/// interrupt_running_process() (the CLI's Ctrl-C, the DAP's `pause`) interrupts the wait.
/// What ends a wait is returned; reporting it (a breakpoint hit, a signal) is the caller's.

#include <sys/types.h>

#include <cstdint>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/process_group.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// Interrupts the process being waited for (resume_and_wait, step_one_instruction), as
/// Ctrl-C does, and records the request (take_interrupt_request); inside a
/// job_interrupt_scope it stops every running process of the job's group instead (and
/// records nothing). Async-signal-safe: the CLI calls it from its SIGINT handler.
void interrupt_running_process();

/// While alive, interrupt_running_process() stops every running member of `group` (its
/// wait_any then reports `interrupted` events) instead of the one process waited for: an
/// MPI job's ranks and starter run together. Nests.
class job_interrupt_scope {
public:
    explicit job_interrupt_scope(tracer::process_group& group);
    ~job_interrupt_scope();
    job_interrupt_scope(const job_interrupt_scope&) = delete;
    job_interrupt_scope& operator=(const job_interrupt_scope&) = delete;

private:
    tracer::process_group* previous_;
};
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
