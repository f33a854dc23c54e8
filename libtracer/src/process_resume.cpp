// Resuming a stopped process: every thread with its pending signal, the threads at a
// breakpoint stepped over it alone first (so that no unrelated thread stops), held threads
// left stopped; and one thread's single instruction step.

#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>

#include <sys/ptrace.h>
#include <sys/wait.h>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

namespace {
/// True when the program has a handler for `sig` (the SigCgt mask of /proc/PID/status).
bool has_handler(pid_t pid, int sig) {
    std::string status = internal::read_small_file("/proc/" + std::to_string(pid) + "/status");
    auto at = status.find("SigCgt:");
    if (at == std::string::npos || sig < 1 || sig > 64) {
        return false;
    }
    unsigned long long mask = std::strtoull(status.c_str() + at + 7, nullptr, 16);
    return (mask >> (sig - 1)) & 1;
}
}  // namespace

bool ptrace_process::impl::single_step(thread_record& t, int signo) {
    std::uint64_t pc = read_pc(t.tid_);
    breakpoint_site* site = nullptr;
    if (auto it = sites.find(pc); it != sites.end() && it->second->is_enabled()) {
        site = it->second.get();
        remove_int3(*site);
    }
    t.forget_regs();
    t.step_over_pc.reset();
    t.stepping = true;
    t.step_done = false;
    t.st = tstate::running;
    pid_t tid = t.tid_;
    auto r = try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(signo)));
    if (!r) {
        t.stepping = false;
    }
    for (;;) {
        thread_record* tp = find(tid);
        if (end || !tp || !tp->stepping) {
            break;
        }
        internal::wakeup_drain();
        if (poll_all()) {
            continue;
        }
        if (!internal::wakeup_wait(100, worth_spinning())) {
            adopt_unknown_tasks();
        }
    }
    if (site && !end && sites.count(pc) && site->is_enabled()) {
        insert_int3(*site);
    }
    thread_record* tp = find(tid);
    bool done = tp && tp->step_done;
    if (tp) {
        tp->step_done = false;
    }
    return done;
}

void ptrace_process::impl::start_reported_step(thread_record& t, int signo) {
    std::uint64_t pc = read_pc(t.tid_);
    reported_step step{t.tid_, std::nullopt};
    if (auto it = sites.find(pc); it != sites.end() && it->second->is_enabled()) {
        remove_int3(*it->second);
        step.site_pc = pc;
    }
    pending_step = step;
    interrupt_requested.store(false);   // as resume_all: an interrupt asked before is spent
    t.forget_regs();
    t.step_over_pc.reset();
    t.stepping = true;
    t.step_done = false;
    t.st = tstate::running;
    running = true;
    if (!try_ptrace(PTRACE_SINGLESTEP, t.tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(signo)))) {
        // ESRCH: the thread died while stopped; waitpid reports its end.
        t.stepping = false;
    }
}

void ptrace_process::impl::end_reported_step() {
    if (!pending_step) {
        return;
    }
    thread_record* t = find(pending_step->tid);
    if (t && t->stepping) {
        return;
    }
    std::optional<std::uint64_t> pc = pending_step->site_pc;
    pending_step.reset();
    if (pc && !end) {
        if (auto it = sites.find(*pc); it != sites.end() && it->second->is_enabled()) {
            insert_int3(*it->second);
        }
    }
}

void ptrace_process::impl::resume_all() {
    require_alive();
    interrupt_requested.store(false);
    running = true;
    // After an early report the threads that were not stopped are simply left running.
    bool partial = others_running;
    others_running = false;
    if (!queue.empty() || end) {
        return;   // all-stop: report what is pending before letting anything run
    }
    unsigned long dead_probe = 0;
    // Threads reported at a breakpoint get over it out of line (out_of_line.cpp): the
    // instruction runs from a slot of its own, or is emulated, and the int3 never leaves.
    // Those that cannot step over it alone, the others staying stopped, so that no thread
    // can run through the site while its int3 is out.
    for (std::size_t i = 0; i < threads.size(); ++i) {
        thread_record& t = *threads[i];
        if (t.st != tstate::stopped || !t.step_over_pc || is_held(t.tid_)) {
            continue;
        }
        pid_t tid = t.tid_;
        try {
            std::uint64_t pc = read_pc(tid);
            auto it = sites.find(pc);
            if (pc != *t.step_over_pc || it == sites.end() || !it->second->is_enabled()) {
                continue;
            }
            if (t.signal_first && t.pending_signal != 0 && has_handler(pid, t.pending_signal)) {
                // gdb: the handler runs first and returns to the breakpoint, which is then
                // reported again; the instruction under it has not run yet.
                continue;
            }
            if (step_over_pad(t, pc) || step_over_out_of_line(t, *it->second)) {
                continue;
            }
            if (partial) {
                // The int3 comes out for the step: nothing else may run meanwhile.
                stop_all();
                partial = false;
            }
            int sig = t.pending_signal;
            t.pending_signal = 0;
            bool done = single_step(t, 0);
            if (thread_record* tp = find(tid)) {
                tp->pending_signal = sig;
            }
            if (!done || !queue.empty() || end) {
                return;   // the step produced an event: report it first
            }
            if (thread_record* tp = find(tid)) {
                tp->st = tstate::stopped;
            }
        } catch (const error&) {
            // ESRCH: the thread died while stopped (SIGKILL from outside). Resume the rest:
            // waitpid reports its end, as cont() below expects for such a thread.
            if (try_ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &dead_probe).err != ESRCH) {
                throw;
            }
            if (thread_record* tp = find(tid)) {
                tp->step_over_pc.reset();
            }
        }
    }
    for (auto& t : threads) {
        if ((t->st == tstate::stopped || t->st == tstate::listening) && !is_held(t->tid_)) {
            int sig = t->pending_signal;
            t->pending_signal = 0;
            cont(*t, sig);
        }
    }
}

// ---- public API -----------------------------------------------------------------------

void ptrace_process::resume() {
    impl_->require_stopped();
    impl_->release_deferred_children();
    impl_->resume_all();
}

void ptrace_process::hold_threads(std::vector<pid_t> tids) { impl_->held = std::move(tids); }

std::optional<std::uint64_t> ptrace_process::step_over_pc(pid_t tid) const {
    thread_record* t = impl_->find(tid);
    return t ? t->step_over_pc : std::nullopt;
}

void ptrace_process::set_step_over_pc(pid_t tid, std::optional<std::uint64_t> pc) {
    if (thread_record* t = impl_->find(tid)) {
        t->step_over_pc = pc;
    }
}

thread_record& ptrace_process::impl::prepare_step(pid_t tid, int& signo) {
    require_stopped();
    settle();
    thread_record* t = find(tid);
    if (!t || t->st != tstate::stopped) {
        error::send("Invalid thread " + std::to_string(tid) + ".");
    }
    release_deferred_children();
    signo = t->pending_signal;
    t->pending_signal = 0;
    return *t;
}

stop_reason ptrace_process::step_instruction(pid_t tid) {
    auto& d = *impl_;
    int sig = 0;
    thread_record& t = d.prepare_step(tid, sig);
    d.running = true;
    bool done = d.single_step(t, sig);
    // A watchpoint that the stepped instruction triggered is this step's stop.
    for (auto it = d.queue.begin(); done && it != d.queue.end(); ++it) {
        if (it->kind == stop_kind::watchpoint && it->tid == tid) {
            stop_reason r = *it;
            d.queue.erase(it);
            thread_record* tp = d.find(tid);
            tp->st = tstate::stopped;
            tp->step_over_pc = d.read_pc(tid);
            d.running = false;
            return r;
        }
    }
    if (done) {
        thread_record* tp = d.find(tid);
        tp->st = tstate::stopped;
        tp->step_over_pc = d.read_pc(tid);
        d.running = false;
        stop_reason r;
        r.kind = stop_kind::single_step;
        r.tid = tid;
        r.signo = SIGTRAP;
        return r;
    }
    // Something else happened (a signal, the thread or the process ended): report it. The
    // other threads are still stopped, so the process is in all-stop already.
    if (auto r = d.take_report()) {
        return *r;
    }
    return *d.wait_impl(-1);
}

void ptrace_process::set_pending_signal(pid_t tid, int signo) {
    if (auto* t = impl_->find(tid)) {
        t->pending_signal = signo;
        t->signal_first = signo != 0;
    }
}

int ptrace_process::pending_signal(pid_t tid) const {
    if (auto* t = impl_->find(tid)) {
        return t->pending_signal;
    }
    return 0;
}

}  // namespace ompdbg::tracer
