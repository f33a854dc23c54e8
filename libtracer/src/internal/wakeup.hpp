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
/// timeout.
bool wakeup_wait(int timeout_ms);
/// Async-signal-safe: wakes a waiter.
void wakeup_notify() noexcept;

}  // namespace ompdbg::tracer::internal
