// The all-stop event loop (LLDB's NativeProcessLinux stop-all protocol): collect every
// pending waitpid result, stop every other thread, queue what they reported, then report
// one event at a time. What one result means is in process_thread_status.cpp, fork
// children in process_forks.cpp, resuming in process_resume.cpp.

#include "internal/env_switch.hpp"
#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>

#include <sys/ptrace.h>
#include <sys/wait.h>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

void ptrace_process::impl::require_alive() const {
    if (!alive) {
        error::send("The program is not being run.");
    }
}

void ptrace_process::impl::require_stopped() const {
    require_alive();
    if (running) {
        error::send("Cannot execute this command while the target is running.");
    }
}

bool ptrace_process::impl::poll_all() {
    bool any = false;
    std::vector<pid_t> tids;
    tids.reserve(threads.size());
    for (auto& t : threads) {
        if (t->st != tstate::stopped && t->st != tstate::listening) {
            tids.push_back(t->tid_);
        }
    }
    for (pid_t tid : tids) {
        if (end) {
            break;
        }
        any = poll_thread(tid) || any;
    }
    return any;
}

bool ptrace_process::impl::poll_thread(pid_t tid) {
    thread_record* t = find(tid);
    if (!t) {
        return false;
    }
    // The leader of a process whose other threads live on reports its exit last; a
    // blocking wait on it here would hang, hence WNOHANG for everyone.
    int status = 0;
    pid_t r = internal::wait_tid(tid, &status, WNOHANG);
    if (r == tid) {
        handle_status(*t, wait_status(status));
        return true;
    }
    if (r == -ECHILD) {
        // Not our tracee any more (already reaped): it is gone.
        if (tid == pid) {
            stop_reason why;
            why.kind = stop_kind::terminated;
            why.tid = tid;
            why.signo = SIGKILL;
            mark_dead(why);
        } else {
            remove_thread(tid);
        }
        return true;
    }
    return false;
}

void ptrace_process::impl::adopt_unknown_tasks() {
    if (end) {
        return;
    }
    for (pid_t tid : internal::list_tasks(pid)) {
        if (!find(tid)) {
            log::write(log::channel::wait, "adopting task {} whose clone event was not seen", tid);
            add_thread(tid, tstate::starting);
        }
    }
}

void ptrace_process::impl::stop_all() {
    stopping_all = true;
    for (auto& t : threads) {
        if (t->st == tstate::running || t->st == tstate::listening) {
            // ESRCH: the thread is exiting; its exit status will come instead of a stop.
            try_ptrace(PTRACE_INTERRUPT, t->tid_, nullptr, nullptr);
            t->st = tstate::stopping;
        }
    }
    auto awaiting = [&] {
        return !end && std::any_of(threads.begin(), threads.end(), [](auto& t) {
                   return t->st == tstate::stopping || t->st == tstate::starting;
               });
    };
    while (awaiting()) {
        internal::wakeup_drain();
        if (poll_all()) {
            continue;
        }
        if (internal::wakeup_wait(100)) {
            continue;
        }
        // Nothing for 100 ms. A thread that can never report: the leader after it called
        // pthread_exit (a zombie until the whole group ends), or a task that vanished.
        adopt_unknown_tasks();
        std::vector<pid_t> gone;
        for (auto& t : threads) {
            if (t->st != tstate::stopping && t->st != tstate::starting) {
                continue;
            }
            char s = internal::thread_state_letter(pid, t->tid_);
            if (s == 'Z' || s == 'X' || s == 0) {
                if (t->tid_ == pid) {
                    t->st = tstate::zombie;
                } else {
                    gone.push_back(t->tid_);
                }
            }
        }
        for (pid_t g : gone) {
            // Left in `stopping`: still polled for its exit status, never waited on here.
            if (auto* t = find(g)) {
                t->st = tstate::zombie;
            }
        }
    }
    stopping_all = false;
}

bool ptrace_process::impl::worth_spinning() const {
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return threads.size() < cores;
}

void ptrace_process::impl::settle() {
    if (others_running && alive && !end) {
        stop_all();
        normalise_pads();   // the others stopped wherever they were, pads included
    }
    others_running = false;
}

// A silent counting breakpoint in a team of threads costs, in all-stop, an interrupt,
// a wait and a resume for every other thread at every hit (12 wait4 and 11 ptrace calls a
// hit for a team of 4, three quarters of the time); a new thread of a team of 64, up to 64
// of each. Reporting the lone event first lets the debugger resume its thread alone when
// nothing else is to be done. Breakpoints of user sites only: the loader's and the step's
// internal sites are handled here with every thread stopped. Watchpoints, caught system
// calls and vfork rely on the others being stopped.
bool ptrace_process::impl::may_report_early() {
    if (!early_reports || queue.size() != 1 || end || interrupt_requested.load() || vfork_pending ||
        syscall_catch || !watches.entries.empty()) {
        return false;
    }
    const stop_reason& r = queue.front();
    switch (r.kind) {
    case stop_kind::thread_exited:
        return true;
    case stop_kind::thread_created: {
        // The debugger reads the new thread (its pthread_t): wait for its first stop, which
        // the kernel sends at once. Only it is polled: what the others report meanwhile
        // stays with the kernel for the next poll_all (which runs before any wait).
        const pid_t created = r.new_tid;
        for (;;) {
            thread_record* t = find(created);
            if (t == nullptr || end || queue.size() != 1) {
                return false;
            }
            if (t->st != tstate::starting) {
                if (t->st != tstate::stopped) {
                    return false;
                }
                resume_creator(r.tid);
                return true;
            }
            internal::wakeup_drain();
            if (!poll_thread(created)) {
                internal::wakeup_wait(100, worth_spinning());   // its stop or its exit will come
            }
        }
    }
    case stop_kind::breakpoint: {
        if (!r.breakpoint_addr) {
            return false;
        }
        auto it = sites.find(r.breakpoint_addr->addr());
        return it != sites.end() && it->second->is_enabled() && !it->second->is_internal();
    }
    default:
        return false;
    }
}

// The creator of a thread waits in clone3 until we resume it, and the debugger announcing
// the new thread reads only the new one: with resume_creators_early it runs on at once (no
// step over its pc either: it is reported running, as gdb's linux-nat resumes it). One that
// made its clone from an out-of-line slot goes on through the slot as any running thread
// does. A creator in any other business (a step, a pending signal, held) stays stopped.
void ptrace_process::impl::resume_creator(pid_t tid) {
    thread_record* c = find(tid);
    if (!resume_creators_early || !c || c->st != tstate::stopped || c->stepping || c->pending_signal != 0 ||
        is_held(tid)) {
        return;
    }
    cont(*c, 0);
}

std::optional<stop_reason> ptrace_process::impl::take_report() {
    normalise_out_of_line();
    normalise_pads();
    end_reported_step();
    if (end) {
        stop_reason r = *end;
        reap_everything();
        return r;
    }
    while (!queue.empty()) {
        stop_reason r = queue.front();
        queue.pop_front();
        if (r.kind == stop_kind::breakpoint) {
            // A hit collected while stopping the others may be stale by now: the site was
            // removed or disabled, or the pc changed. The pc was already rewound, so the
            // thread simply executes the original instruction.
            thread_record* t = find(r.tid);
            auto it = sites.find(r.breakpoint_addr->addr());
            if (!t || it == sites.end() || !it->second->is_enabled() || read_pc(r.tid) != r.breakpoint_addr->addr()) {
                continue;
            }
            if (r.breakpoint_addr->addr() == r_brk && it->second->is_internal() && it->second->refcount_ <= 1) {
                // The dynamic loader's r_brk: libraries were (un)loaded.
                t->step_over_pc = r_brk;
                if (on_loader_breakpoint()) {
                    ool_sites.clear();   // code may have moved: plan every site again
                    r.kind = stop_kind::library_event;
                    r.breakpoint_addr.reset();
                    running = false;
                    return r;
                }
                resume_all();
                return std::nullopt;
            }
            for (const auto& q : queue) {
                if (q.kind == stop_kind::breakpoint && q.breakpoint_addr) {
                    auto qs = sites.find(q.breakpoint_addr->addr());
                    if (qs != sites.end() && qs->second->is_enabled() && !qs->second->is_internal()) {
                        r.other_breakpoint_tids.push_back(q.tid);
                    }
                }
            }
        }
        if (thread_record* t = find(r.tid); t && t->st == tstate::stopped) {
            // gdb: on resume, a thread whose pc is still where it was reported steps over
            // a breakpoint there instead of hitting it again.
            try {
                t->step_over_pc = read_pc(r.tid);
            } catch (const error&) {
            }
        }
        running = false;
        return r;
    }
    if (interrupt_requested.exchange(false)) {
        stop_reason r;
        r.kind = stop_kind::interrupted;
        r.signo = SIGINT;
        r.tid = leader() && leader()->st == tstate::stopped ? pid : (threads.empty() ? pid : threads.front()->tid_);
        for (auto& t : threads) {
            if (t->st == tstate::stopped) {
                r.tid = t->tid_;
                break;
            }
        }
        running = false;
        return r;
    }
    return std::nullopt;
}

// Every queued event turned out stale (a hit of a site deleted or disabled since it was
// collected): nothing is running any more, yet the caller asked the process to run. Resume
// it now, or the wait would never end.
void ptrace_process::impl::resume_if_everything_stale() {
    if (end || !queue.empty() || !running) {
        return;
    }
    bool any_running = std::any_of(threads.begin(), threads.end(), [](auto& t) {
        return t->st == tstate::running || t->st == tstate::stopping || t->st == tstate::starting;
    });
    if (!any_running) {
        log::write(log::channel::wait, "every queued event was stale: resuming");
        resume_all();
    }
}

std::optional<stop_reason> ptrace_process::impl::wait_impl(int timeout_ms) {
    require_alive();
    internal::wakeup_init();
    auto start = std::chrono::steady_clock::now();
    for (;;) {
        if (end || !queue.empty()) {
            if (may_report_early()) {
                if (auto r = take_report()) {
                    r->others_running = others_running = true;
                    return r;
                }
                resume_all();   // the hit was stale: its thread goes on, as the others do
                continue;
            }
            if (!end) {
                stop_all();
                others_running = false;
            }
            if (auto r = take_report()) {
                return r;
            }
            resume_if_everything_stale();
            continue;
        }
        if (!running) {
            error::send("The program is not running.");
        }
        internal::wakeup_drain();
        bool got = poll_all();
        if (end || !queue.empty()) {
            continue;
        }
        if (interrupt_requested.load()) {
            stop_all();
            if (auto r = take_report()) {
                return r;
            }
            continue;
        }
        if (got) {
            continue;
        }
        int wait_ms = -1;
        if (timeout_ms >= 0) {
            auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                             .count();
            if (spent >= timeout_ms) {
                return std::nullopt;
            }
            wait_ms = static_cast<int>(timeout_ms - spent);
        }
        if (!internal::wakeup_wait(wait_ms, worth_spinning())) {
            if (timeout_ms >= 0) {
                continue;   // re-polls once, then returns nullopt above
            }
        } else {
            // An empty wake-up may be the exit of a thread we never heard of (see
            // adopt_unknown_tasks); cheap enough to check only then.
            internal::wakeup_drain();
            if (!poll_all()) {
                adopt_unknown_tasks();
            }
        }
    }
}

std::optional<stop_reason> ptrace_process::impl::poll_report(bool& activity) {
    if (!alive || !running) {
        return std::nullopt;
    }
    if (!end && queue.empty() && poll_all()) {
        activity = true;
    }
    if (end || !queue.empty() || interrupt_requested.load()) {
        activity = true;
        if (!end) {
            stop_all();
        }
        return take_report();   // nullopt: handled internally (r_brk) and resumed
    }
    return std::nullopt;
}

stop_reason ptrace_process::wait_for_stop() { return *impl_->wait_impl(-1); }

std::optional<stop_reason> ptrace_process::wait_for_stop(int timeout_ms) {
    return impl_->wait_impl(timeout_ms < 0 ? 0 : timeout_ms);
}

void ptrace_process::interrupt() {
    // Async-signal-safe: an atomic store and a write(2) to the wake-up pipe. The waiting
    // loop then stops every thread with PTRACE_INTERRUPT (no SIGSTOP is ever queued, so
    // nothing stray is left for a later detach).
    impl_->interrupt_requested.store(true);
    internal::wakeup_notify();
}

void ptrace_process::set_early_breakpoint_reports(bool on) {
    // OMPDBG_EARLY_REPORTS=off keeps every stop all-stop (the "before" of workloads 2 and 8).
    static const bool allowed = internal::env_switch_on("OMPDBG_EARLY_REPORTS", "off");
    impl_->early_reports = on && allowed;
}

void ptrace_process::set_resume_creators_early(bool on) {
    impl_->resume_creators_early = on;
}

void ptrace_process::stop_others() {
    impl_->settle();
}

bool ptrace_process::others_running() const {
    return impl_->others_running;
}

}  // namespace ompdbg::tracer
