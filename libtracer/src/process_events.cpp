// The all-stop event loop (LLDB's NativeProcessLinux stop-all protocol, rr's wait-status
// decoding): collect every pending waitpid result, stop every other thread, queue what
// they reported, then report one event at a time.

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
#include <cstdlib>
#include <string>
#include <thread>

#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cstddef>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

namespace {
constexpr std::uint8_t int3 = 0xcc;

bool is_fault_signal(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

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

// Waits for the first stop of an auto-attached fork child; false when it ended instead (or
// is not ours). The kernel always reports that stop (or the child's death), but only once
// the child has run, which on a loaded machine may take long. Until it is seen the child
// can be neither cleaned nor detached: giving up early (this used to be 100 polls) left it
// in its ptrace stop for good, traced by us and never resumed (the hang of the MPI2DD
// hierarchical test: a directory forked by the starter never ran). Each sleep drains the
// SIGCHLD pipe first, or a byte another tracee left there turns every sleep into a spin.
bool ptrace_process::impl::await_fork_child_stop(pid_t child) {
    auto start = std::chrono::steady_clock::now();
    for (bool warned = false;;) {
        internal::wakeup_drain();
        int status = 0;
        pid_t r = internal::wait_tid(child, &status, WNOHANG);
        if (r == child) {
            // The drain may have taken other tracees' wake-ups: leave one for our caller.
            internal::wakeup_notify();
            return !WIFEXITED(status) && !WIFSIGNALED(status);
        }
        if (r < 0) {
            internal::wakeup_notify();
            return false;
        }
        if (!warned && std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
            warned = true;
            log::write(log::channel::wait, "fork child {} has not reported its first stop after 10 s", child);
        }
        internal::wakeup_wait(100);
    }
}

void ptrace_process::impl::on_vfork_done(pid_t tid) {
    // The vfork child has exec'ed or exited: the shared memory is ours again.
    vfork_pending = false;
    vfork_tid = 0;
    reguard_pages(tid);
    for (auto& [addr, s] : sites) {
        if (s->is_enabled()) {
            try {
                insert_int3(*s);
            } catch (const error&) {
            }
        }
    }
}

void ptrace_process::finish_vfork() {
    auto& d = *impl_;
    d.require_stopped();
    thread_record* t = d.vfork_tid != 0 ? d.find(d.vfork_tid) : nullptr;
    if (!d.vfork_pending || t == nullptr) {
        return;
    }
    // Only the vforking thread runs, to its VFORK_DONE stop, which the kernel reports at once
    // now that the child is gone from the memory. A signal that comes first is kept pending.
    const pid_t tid = t->tid_;
    for (int stops = 0; stops < 64; ++stops) {
        t->forget_regs();
        if (!try_ptrace(PTRACE_CONT, tid, nullptr, nullptr)) {
            break;
        }
        int status = 0;
        if (internal::wait_tid(tid, &status, 0) != tid) {
            break;
        }
        if (!WIFSTOPPED(status)) {
            d.handle_status(*t, wait_status(status));   // it died: the exit is recorded
            return;
        }
        if (status >> 16 == PTRACE_EVENT_VFORK_DONE) {
            d.on_vfork_done(tid);
            return;
        }
        if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP && WSTOPSIG(status) != SIGSTOP) {
            t->pending_signal = WSTOPSIG(status);
        }
    }
    log::write(log::channel::ptrace, "thread {}: no VFORK_DONE stop", tid);
}

void ptrace_process::impl::release_fork_child(pid_t child, bool is_vfork, bool keep) {
    // Fork children are not debugged (gdb's `detach-on-fork on`), but they inherited our
    // int3 bytes: they must go before the child runs, or its first hit kills it with
    // SIGTRAP. The child is auto-attached and reports an initial stop first.
    if (!await_fork_child_stop(child)) {
        return;
    }
    if (is_vfork) {
        // The vfork child shares our memory: take the int3s out of it (the parent is
        // suspended until PTRACE_EVENT_VFORK_DONE puts them back).
        for (auto& [addr, s] : sites) {
            if (s->is_enabled()) {
                remove_int3(*s);
            }
        }
        vfork_pending = true;
        // Our software watchpoint guards are in that memory too: a write of the child
        // there would kill it. They are lifted until VFORK_DONE.
        unguard_fork_child(child);
    } else {
        // The child's copy of our software watchpoint guards would kill it on its first
        // write there. (A vfork child shares our memory and normally only calls exec.)
        unguard_fork_child(child);
        restore_pads_in_child(child);
        for (auto& [addr, s] : sites) {
            if (s->is_enabled() && pad_of(addr) == nullptr) {
                auto aligned = addr & ~std::uint64_t{7};
                auto peek = try_ptrace(PTRACE_PEEKDATA, child, reinterpret_cast<void*>(aligned), nullptr);
                if (!peek) {
                    continue;
                }
                long word = peek.value;
                reinterpret_cast<std::byte*>(&word)[addr - aligned] = s->saved_byte();
                try_ptrace(PTRACE_POKEDATA, child, reinterpret_cast<void*>(aligned), reinterpret_cast<void*>(word));
            }
        }
    }
    if (!keep) {
        try_ptrace(PTRACE_DETACH, child, nullptr, nullptr);
    }
}

void ptrace_process::impl::release_deferred_children() {
    for (pid_t child : deferred_children) {
        try_ptrace(PTRACE_DETACH, child, nullptr, nullptr);
    }
    deferred_children.clear();
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
        thread_record* t = find(tid);
        if (!t) {
            continue;
        }
        // The leader of a process whose other threads live on reports its exit last; a
        // blocking wait on it here would hang, hence WNOHANG for everyone.
        int status = 0;
        pid_t r = internal::wait_tid(tid, &status, WNOHANG);
        if (r == tid) {
            any = true;
            handle_status(*t, wait_status(status));
        } else if (r == -ECHILD) {
            // Not our tracee any more (already reaped): it is gone.
            any = true;
            if (tid == pid) {
                stop_reason why;
                why.kind = stop_kind::terminated;
                why.tid = tid;
                why.signo = SIGKILL;
                mark_dead(why);
            } else {
                remove_thread(tid);
            }
        }
    }
    return any;
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
        // the kernel sends at once. Whatever else turns up meanwhile ends the early report.
        const pid_t created = r.new_tid;
        for (;;) {
            thread_record* t = find(created);
            if (t == nullptr || end || queue.size() != 1) {
                return false;
            }
            if (t->st != tstate::starting) {
                return t->st == tstate::stopped;
            }
            internal::wakeup_drain();
            if (!poll_all()) {
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

std::optional<stop_reason> ptrace_process::impl::take_report() {
    normalise_out_of_line();
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

stop_reason ptrace_process::step_instruction(pid_t tid) {
    auto& d = *impl_;
    d.require_stopped();
    d.settle();
    thread_record* t = d.find(tid);
    if (!t || t->st != tstate::stopped) {
        error::send("Invalid thread " + std::to_string(tid) + ".");
    }
    d.release_deferred_children();
    int sig = t->pending_signal;
    t->pending_signal = 0;
    d.running = true;
    bool done = d.single_step(*t, sig);
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

void ptrace_process::stop_others() {
    impl_->settle();
}

bool ptrace_process::others_running() const {
    return impl_->others_running;
}

void ptrace_process::set_report_forks(bool on) {
    impl_->report_forks = on;
}

void ptrace_process::set_keep_fork_children(bool on, bool vfork_too) {
    impl_->keep_fork_children = on;
    impl_->keep_vfork_children = on && vfork_too;
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
