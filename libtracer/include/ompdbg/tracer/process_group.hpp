#pragma once
/// Several traced processes waited for together (an MPI job: the ranks and their
/// starter). One loop polls every member and sleeps on the shared SIGCHLD self-pipe, so a
/// job of N processes costs one wait, not N. Each member stays all-stop on its own; the
/// group adds "stop every member" and "resume every member" on top. Non-owning.

#include <optional>
#include <vector>

#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::tracer {

class process_group {
public:
    /// One member's stop.
    struct event {
        process* proc = nullptr;
        stop_reason why;
    };

    /// Adds `p` (not owned; it must outlive its membership). Adding twice is a no-op.
    void add(process& p);
    /// Removes `p` (e.g. before it is destroyed).
    void remove(const process& p);
    const std::vector<process*>& members() const { return members_; }

    /// Whether `p` was resumed and has not reported a stop since.
    static bool is_running(const process& p);

    /// Resumes every alive, stopped member (each steps over its breakpoints first).
    void resume_all();
    /// Waits until one running member reports a stop (that member is then all-stopped;
    /// the others keep running). `timeout_ms` < 0: no limit; nullopt on timeout. Throws
    /// "The program is not running." when no member is running.
    std::optional<event> wait_any(int timeout_ms = -1);
    /// Stops every running member (PTRACE_INTERRUPT of all their threads) and waits for
    /// each. Returns the events members had produced meanwhile instead of the interrupt
    /// (a breakpoint hit, an exit), to be reported later; plain interrupts are dropped.
    std::vector<event> stop_all();
    /// Async-signal-safe: asks every running member to stop; wait_any then reports an
    /// `interrupted` event.
    void interrupt();

    /// Starts a single-step of thread `tid` of the stopped process `p` (its other threads
    /// stay stopped) whose end wait_any (or p's wait_for_stop) reports like any stop:
    /// `single_step`, or what stopped it first (a signal, the end, an interrupt while it
    /// blocks in a system call). Returns false, starting nothing, for a process that can
    /// only step synchronously (process::step_instruction): a remote one.
    static bool start_step(process& p, pid_t tid);

private:
    std::vector<process*> members_;
};

}  // namespace ompdbg::tracer
