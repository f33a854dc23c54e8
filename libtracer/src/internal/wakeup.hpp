#pragma once
// Blocking until "something may have happened" to a tracee without busy waiting: a SIGCHLD
// handler (installed once, chaining to any handler that was there before) writes a byte to
// a non-blocking self-pipe, and process::interrupt() writes to the same pipe. Waiters drain
// the pipe, poll waitpid(WNOHANG) for every thread, and only then sleep in ppoll on the
// pipe: a SIGCHLD that arrives after the poll leaves a byte in the pipe, so none is lost.

namespace ompdbg::tracer::internal {

/// Installs the SIGCHLD handler and creates the pipe (idempotent, thread-safe).
void wakeup_init();
/// Discards pending wake-ups (call before polling waitpid).
void wakeup_drain();
/// Sleeps until a wake-up arrives or `timeout_ms` passes (-1: no limit). Returns false on
/// timeout. `spin_first`: spin on the wake-up flag for a few tens of microseconds before
/// sleeping (OMPDBG_WAIT_SPIN_US, default 50; 0 never spins).
///
/// A tracee's next stop often comes microseconds after its resume (a breakpoint hit in a
/// loop). Sleeping lets this core go idle, and waking it costs more than the hit itself
/// (measured: a counting breakpoint 56 us a hit sleeping, 40 us spinning first). But a
/// spinning debugger takes a core from the tracee: with as many runnable tracee threads as
/// cores (an OpenMP team) the same spin doubled the time an event (39 -> 77 us). Callers
/// spin only while the tracee has fewer threads than the machine has cores.
bool wakeup_wait(int timeout_ms, bool spin_first = false);
/// Async-signal-safe: wakes a waiter.
void wakeup_notify() noexcept;

}  // namespace ompdbg::tracer::internal
