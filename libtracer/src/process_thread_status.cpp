// What one thread's waitpid result means (rr's wait-status decoding, LLDB's one switch):
// exits, clone/fork/exec/vfork events, syscall stops, signals and breakpoint traps, each
// recorded on the thread and queued as an event for the all-stop loop (process_events.cpp);
// and resuming one thread (PTRACE_CONT / PTRACE_SYSCALL).

#include "internal/process_impl.hpp"
#include "internal/ptrace_wrapper.hpp"

#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <csignal>
#include <utility>

#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cstddef>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

namespace {
bool is_fault_signal(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

}  // namespace

void ptrace_process::impl::cont(thread_record& t, int signo) {
    t.forget_regs();
    t.signal_first = false;
    t.step_over_pc.reset();
    // catch syscall: PTRACE_SYSCALL stops at every system call entry and exit as well.
    // A software watchpoint's guarded pages: PTRACE_SYSCALL too, so that a system call that
    // fails with EFAULT there is made again unguarded (retry_guarded_syscall).
    bool syscall_stops = syscall_catch || !watches.guarded_prot.empty();
    auto r = try_ptrace(syscall_stops ? PTRACE_SYSCALL : PTRACE_CONT, t.tid_, nullptr,
                        reinterpret_cast<void*>(static_cast<long>(signo)));
    // ESRCH: the thread died while stopped (SIGKILL from outside, exit_group of another
    // thread). Its exit is still reported by waitpid, so treat it as running.
    (void)r;
    t.st = tstate::running;
}

void ptrace_process::impl::mark_dead(const stop_reason& why) {
    leave_shared_memory();
    end = why;
    for (auto& t : threads) {
        t->st = tstate::zombie;
    }
}

void ptrace_process::impl::leave_shared_memory() {
    if (vfork_parent == 0) {
        return;
    }
    // mem_fd was opened on the memory we shared with the parent and still reaches it after
    // our exec (a new memory) or exit: the parent holds it, suspended in vfork() until now.
    for (auto& [addr, s] : sites) {
        if (s->is_enabled()) {
            remove_int3(*s);
        }
    }
    log::write(log::channel::ptrace, "vfork child {} left the memory of {}", pid, vfork_parent);
    vfork_parent = 0;
}

void ptrace_process::impl::handle_syscall_stop(thread_record& t) {
    t.st = tstate::stopped;
    t.forget_regs();
    // PTRACE_GET_SYSCALL_INFO (Linux 5.3) says entry or exit; on older kernels the stops
    // alternate. The number is orig_rax at both stops.
    __ptrace_syscall_info info{};
    auto got = try_ptrace(PTRACE_GET_SYSCALL_INFO, t.tid_, reinterpret_cast<void*>(sizeof info), &info);
    bool entry = got && got.value > 0 && info.op != PTRACE_SYSCALL_INFO_NONE ? info.op == PTRACE_SYSCALL_INFO_ENTRY
                                                                            : !t.in_syscall;
    t.in_syscall = entry;
    auto nr = try_ptrace(PTRACE_PEEKUSER, t.tid_, reinterpret_cast<void*>(offsetof(user_regs_struct, orig_rax)), nullptr);
    int number = nr ? static_cast<int>(nr.value) : -1;
    if (!entry && !watches.guarded_prot.empty() && retry_guarded_syscall(t)) {
        return;
    }
    bool caught = syscall_catch && (syscall_catch->empty() ||
                                    std::find(syscall_catch->begin(), syscall_catch->end(), number) != syscall_catch->end());
    if (caught) {
        stop_reason r;
        r.kind = entry ? stop_kind::syscall_entry : stop_kind::syscall_exit;
        r.tid = t.tid_;
        r.syscall_number = number;
        queue_event(r);
        return;
    }
    if (!stopping_all) {
        cont(t, 0);
    }
}

void ptrace_process::impl::handle_status(thread_record& t, const wait_status& ws) {
    log::write(log::channel::wait, "thread {}: {}", t.tid_, ws.describe());
    pid_t tid = t.tid_;
    switch (ws.type()) {
    case wait_status::kind::exited:
    case wait_status::kind::fatal_signal: {
        if (tid == pid) {
            stop_reason r;
            r.tid = tid;
            if (ws.type() == wait_status::kind::exited) {
                r.kind = stop_kind::exited;
                r.exit_code = ws.exit_code();
            } else {
                r.kind = stop_kind::terminated;
                r.signo = ws.signo();
            }
            mark_dead(r);
            return;
        }
        t.stepping = false;
        remove_thread(tid);   // t is dangling from here on
        if (!end) {
            stop_reason r;
            r.kind = stop_kind::thread_exited;
            r.tid = tid;
            queue_event(r);
        }
        return;
    }
    case wait_status::kind::interrupt_stop:
        // Our PTRACE_INTERRUPT, or the first stop of an auto-attached clone.
        if (t.stepping && is_reported_step(t) && (stopping_all || interrupt_requested.load())) {
            // A reported step stopped on the way (a step that blocks in a system call, and
            // Ctrl-C or the job's stop_all): the instruction has not completed.
            t.stepping = false;
            t.stale_step_trap = true;
            t.st = tstate::stopped;
            return;
        }
        if (t.stepping) {
            // An interrupt trap left pending from an earlier stop_all (the thread reported
            // another event first) fires before the step: step again.
            try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
            return;
        }
        if (t.st == tstate::stopping || t.st == tstate::starting || stopping_all) {
            if (t.st == tstate::starting && watches.has_hardware()) {
                apply_debug_registers(t);   // debug registers are per thread
            }
            t.first_stop = t.st == tstate::starting;
            t.st = tstate::stopped;
            return;
        }
        // A stale trap (see above) while running: nobody asked for it, keep going.
        cont(t, 0);
        return;
    case wait_status::kind::syscall_stop:
        t.stepping = false;
        handle_syscall_stop(t);
        return;
    case wait_status::kind::group_stop:
        // Group-stop under PTRACE_SEIZE (the process got SIGSTOP/SIGTSTP and we passed
        // it on): while stopping everything it counts as stopped; otherwise park the thread
        // with PTRACE_LISTEN so it stays stopped like an untraced process would, until
        // SIGCONT or our next PTRACE_INTERRUPT.
        if (t.st == tstate::stopping || t.st == tstate::starting || stopping_all) {
            t.st = tstate::stopped;
        } else {
            t.forget_regs();
            try_ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
            t.st = tstate::listening;
        }
        return;
    case wait_status::kind::event_stop: {
        bool was_stepping = t.stepping;
        t.stepping = false;
        t.st = tstate::stopped;
        int ev = ws.event();
        if (ev == PTRACE_EVENT_CLONE) {
            auto msg = internal::get_event_msg(tid);
            if (msg && *msg != 0) {
                pid_t new_tid = static_cast<pid_t>(*msg);
                if (!find(new_tid)) {
                    add_thread(new_tid, tstate::starting);
                }
                stop_reason r;
                r.kind = stop_kind::thread_created;
                r.tid = tid;
                r.new_tid = new_tid;
                queue_event(r);
            }
            return;
        }
        if (ev == PTRACE_EVENT_EXEC) {
            // After execve every other thread is gone (de_thread) and the execing thread
            // now has the leader's id; the address space, and with it every site, is new.
            std::vector<pid_t> others;
            for (auto& th : threads) {
                if (th->tid_ != pid) {
                    others.push_back(th->tid_);
                }
            }
            for (pid_t o : others) {
                remove_thread(o);
            }
            if (!find(pid)) {
                add_thread(pid, tstate::stopped);
            }
            leader()->st = tstate::stopped;
            leader()->forget_regs();
            leave_shared_memory();   // before open_mem: a vfork child's int3s leave the parent
            sites.clear();
            pads.clear();   // the old image and its pad pages are gone
            retired_pads.clear();
            pad_pages.clear();
            lifted_int3.clear();
            drop_watchpoints(false);   // the watched memory is gone with the old image
            ool_sites.clear();
            ool_pages.clear();
            scratch_reserve_low = scratch_reserve_high = 0;
            ool_disabled = false;
            leader()->ool_slot = 0;
            queue.clear();
            open_mem();
            init_shared_libraries();
            stop_reason r;
            r.kind = stop_kind::exec;
            r.tid = pid;
            queue_event(r);
            return;
        }
        if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK) {
            auto msg = internal::get_event_msg(tid);
            if (msg && *msg != 0) {
                // follow-fork-mode child / detach-on-fork off: a fork child stays ours
                // (adopt_fork_child). A vfork child, which shares our memory, only with
                // keep_vfork_children: our int3s and guards leave that memory until
                // VFORK_DONE, and the kernel holds us in vfork() until the child execs or
                // exits. A child let go while the fork is reported is detached on the next
                // resume, once the debugger has said so.
                bool keep = ev == PTRACE_EVENT_FORK ? keep_fork_children : keep_vfork_children;
                release_fork_child(static_cast<pid_t>(*msg), ev == PTRACE_EVENT_VFORK, keep || report_forks);
                if (ev == PTRACE_EVENT_VFORK) {
                    vfork_tid = tid;
                }
                if (report_forks && !keep) {
                    deferred_children.push_back(static_cast<pid_t>(*msg));
                }
                if (report_forks || keep) {
                    // catch fork: the parent stays in its event stop and the fork is reported.
                    t.st = tstate::stopped;
                    t.cache.reset();
                    t.gp_cache.reset();
                    stop_reason r;
                    r.kind = stop_kind::fork;
                    r.tid = tid;
                    r.new_tid = static_cast<pid_t>(*msg);
                    r.is_vfork = ev == PTRACE_EVENT_VFORK;
                    queue_event(r);
                    return;
                }
            }
        } else if (ev == PTRACE_EVENT_VFORK_DONE) {
            on_vfork_done(tid);
        }
        // Not a reported event; resume as if nothing happened. A thread single-stepping
        // the fork's syscall instruction steps on: the step ends when the call returns.
        if (!stopping_all) {
            if (was_stepping) {
                t.stepping = true;
                t.st = tstate::running;
                t.forget_regs();
                try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
            } else {
                cont(t, 0);
            }
        }
        return;
    }
    case wait_status::kind::signal_stop: {
        int sig = ws.signo();
        if (sig == SIGSEGV && (!watches.guarded_prot.empty() || !t.unguarded_pages.empty())) {
            // A write to a page a software watchpoint guards (watchpoints.cpp).
            if (auto fault = internal::get_siginfo(tid); fault && handle_watch_fault(t, *fault)) {
                return;
            }
        }
        t.st = tstate::stopped;
        t.forget_regs();
        auto si = internal::get_siginfo(tid);
        if (std::exchange(t.stale_step_trap, false) && sig == SIGTRAP && si && si->si_code > 0 && !t.stepping) {
            // The SIGTRAP of a reported step stopped inside a system call (user_single_step_
            // report at the call's exit): the step was already reported as interrupted.
            log::write(log::channel::wait, "thread {}: stale single-step trap dropped", tid);
            if (!stopping_all) {
                cont(t, 0);
            }
            return;
        }
        if (sig != SIGTRAP) {
            t.last_siginfo = si;
        }
        if (sig == SIGTRAP && si && si->si_code == TRAP_HWBKPT && watches.has_hardware() && handle_debug_trap(t)) {
            return;
        }
        if (sig == SIGTRAP && si) {
            bool from_kernel = si->si_code > 0;   // not SI_USER / SI_TKILL / SI_QUEUE
            if (si->si_code == SI_KERNEL || si->si_code == TRAP_BRKPT) {
                std::uint64_t pc = read_pc(tid);
                if (handle_pad_trap(t, pc, si->si_code)) {
                    return;
                }
                auto it = sites.find(pc - 1);
                if (it != sites.end() && it->second->is_enabled()) {
                    // int3 leaves pc after the breakpoint byte: rewind to the site.
                    write_pc(tid, pc - 1);
                    t.stepping = false;
                    t.ool_slot = 0;   // at a site, so not inside an out-of-line slot
                    stop_reason r;
                    r.kind = stop_kind::breakpoint;
                    r.tid = tid;
                    r.signo = SIGTRAP;
                    r.si_code = si->si_code;
                    r.breakpoint_addr = virt_addr(pc - 1);
                    queue_event(r);
                    return;
                }
                if ((it == sites.end() || !it->second->is_enabled()) && is_lifted_int3_trap(pc)) {
                    // The late trap of a breakpoint deleted or disabled since: the thread
                    // runs the program's instruction there as if nothing had happened.
                    log::write(log::channel::wait, "thread {}: late trap of lifted int3 at 0x{:x} dropped", tid, pc - 1);
                    write_pc(tid, pc - 1);
                    t.forget_regs();
                    if (t.stepping) {
                        // The pending signal came before the step's instruction: step again.
                        t.st = tstate::running;
                        try_ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
                    } else if (!stopping_all) {
                        cont(t, 0);
                    }
                    return;
                }
            }
            if (t.stepping && from_kernel) {
                t.stepping = false;
                t.step_done = true;
                if (is_reported_step(t)) {
                    // Its end is this thread's stop, reported by the wait.
                    t.step_done = false;
                    stop_reason r;
                    r.kind = stop_kind::single_step;
                    r.tid = tid;
                    r.signo = SIGTRAP;
                    queue_event(r);
                }
                return;
            }
        }
        t.stepping = false;
        stop_reason r;
        r.kind = stop_kind::signal;
        r.tid = tid;
        r.signo = sig;
        if (si) {
            r.si_code = si->si_code;
            if (is_fault_signal(sig)) {
                r.fault_addr = virt_addr(reinterpret_cast<std::uint64_t>(si->si_addr));
            }
        }
        t.pending_signal = sig;
        queue_event(r);
        return;
    }
    }
}

void ptrace_process::set_syscall_catch(std::optional<std::vector<int>> numbers) {
    impl_->syscall_catch = std::move(numbers);
}

std::optional<siginfo_t> ptrace_process::last_siginfo(pid_t tid) const {
    if (auto* t = impl_->find(tid)) {
        return t->last_siginfo;
    }
    return std::nullopt;
}

}  // namespace ompdbg::tracer
