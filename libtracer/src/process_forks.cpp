// Fork and vfork children of a traced process: the first stop of an auto-attached child,
// our int3s taken out of a child that is not followed and the child let go, the end of a
// vfork (the memory is the parent's again), and the settings that choose what is kept.

#include "internal/process_impl.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <chrono>
#include <csignal>

#include <sys/ptrace.h>
#include <sys/wait.h>

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

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

void ptrace_process::set_report_forks(bool on) {
    impl_->report_forks = on;
}

void ptrace_process::set_keep_fork_children(bool on, bool vfork_too) {
    impl_->keep_fork_children = on;
    impl_->keep_vfork_children = on && vfork_too;
}

}  // namespace ompdbg::tracer
