// System calls that fail with EFAULT on a page a software watchpoint guards: the kernel
// does not fault in a write-protected page, it fails the call (a read(2) into a watched
// buffer). Such a call is made again with the guards lifted (retry_guarded_syscall).
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <vector>

#include "internal/process_impl.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/syscall_injection.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

using internal::try_ptrace;

namespace {

// Runs the system call `tid` just made again, from its exit stop (registers `exit_regs`),
// to its next exit stop: the thread goes back onto its syscall instruction with the call's
// number and arguments (the kernel keeps rdi, rsi, rdx, r10, r8, r9) and is resumed with
// PTRACE_SYSCALL twice, entry then exit. Signals that arrive meanwhile are collected in
// `deferred`. False when the thread went away.
bool rerun_syscall(pid_t tid, const user_regs_struct& exit_regs, std::vector<int>& deferred) {
    user_regs_struct r = exit_regs;
    r.rip -= 2;
    r.rax = r.orig_rax;
    if (!internal::set_thread_regs(tid, r)) {
        return false;
    }
    for (int stops = 0; stops < 64; ++stops) {
        if (!try_ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr)) {
            return false;
        }
        int status = 0;
        if (internal::wait_tid(tid, &status, 0) != tid || !WIFSTOPPED(status)) {
            return false;
        }
        if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
            __ptrace_syscall_info info{};
            auto got = try_ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info);
            if (got && got.value > 0 && info.op == PTRACE_SYSCALL_INFO_EXIT) {
                return true;
            }
            continue;   // the entry stop
        }
        if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP && WSTOPSIG(status) != SIGSTOP) {
            deferred.push_back(WSTOPSIG(status));   // handed back to the program afterwards
        }
    }
    return false;
}

}  // namespace

bool ptrace_process::impl::retry_guarded_syscall(thread_record& t) {
    const pid_t tid = t.tid_;
    user_regs_struct regs{};
    if (watches.guarded_prot.empty() || !internal::get_thread_regs(tid, regs) || static_cast<long>(regs.rax) != -EFAULT) {
        return false;
    }
    // Only a call made by a `syscall` instruction (0f 05) can be made again this way.
    std::byte insn[2]{};
    if (raw_read(regs.rip - 2, insn) != 2 || insn[0] != std::byte{0x0f} || insn[1] != std::byte{0x05}) {
        return false;
    }
    // The kernel does not fault in a guarded page: it returns EFAULT, perhaps for one of ours
    // (a read(2) into a watched buffer), perhaps for a bad pointer of the program, which the
    // call made again with every guard lifted returns the same. The arguments cannot tell
    // (readv's buffers are behind a pointer), so every guarded page is lifted.
    log::write(log::channel::ptrace, "thread {}: syscall {} returned EFAULT with guarded pages: made again",
               tid, static_cast<long>(regs.orig_rax));
    t.forget_regs();
    if (stopping_all || !queue.empty()) {
        // Another thread has something to report: this thread makes the call again when it is
        // resumed (and comes back here then), so that each change is reported on its own.
        regs.rip -= 2;
        regs.rax = regs.orig_rax;
        internal::set_thread_regs(tid, regs);
        t.st = tstate::stopped;
        t.in_syscall = false;
        return true;
    }
    // While the guards are lifted any thread could write the pages unseen: the others are
    // stopped first, and resumed afterwards unless something is to be reported.
    std::vector<pid_t> paused;
    for (auto& o : threads) {
        if (o.get() != &t && o->st == tstate::running) {
            paused.push_back(o->tid_);
        }
    }
    if (!paused.empty()) {
        t.st = tstate::stopped;
        stop_all();
    }
    std::vector<std::vector<std::byte>> old_bytes = software_watched_bytes();
    std::vector<int> deferred;
    std::vector<std::uint64_t> lifted;
    bool lost = false;
    for (auto& [page, prot] : watches.guarded_prot) {
        if (!internal::inject_syscall_into(tid, regs, syscall_gadget(), SYS_mprotect, page, internal::guard_page_size,
                            static_cast<std::uint64_t>(watches.original_prot[page]), deferred)) {
            lost = true;
            break;
        }
        lifted.push_back(page);
    }
    lost = lost || !rerun_syscall(tid, regs, deferred);
    user_regs_struct after{};
    if (!lost && internal::get_thread_regs(tid, after)) {
        for (std::uint64_t p : lifted) {
            internal::inject_syscall_into(tid, after, syscall_gadget(), SYS_mprotect, p, internal::guard_page_size,
                           static_cast<std::uint64_t>(watches.guarded_prot[p]), deferred);
        }
    }
    t.forget_regs();
    t.in_syscall = false;
    if (lost) {
        log::write(log::channel::ptrace, "thread {} went away while making a syscall again", tid);
        t.st = tstate::running;   // its exit status is collected by the next poll
    } else {
        t.st = tstate::stopped;   // at the exit stop of the call made again
        if (!deferred.empty()) {
            t.pending_signal = deferred.front();
        }
    }
    // The call wrote what it wrote: a watched value it changed is a hit at the instruction
    // after the call (awatch too; rwatch cannot tell a kernel read from nothing).
    std::optional<stop_reason> hit;
    for (std::size_t i = 0; i < watches.entries.size() && !hit && !lost; ++i) {
        const auto& e = watches.entries[i];
        if (e.mode != watch_mode::software || e.kind == watch_kind::read) {
            continue;
        }
        std::vector<std::byte> now(e.size);
        raw_read(e.addr, now);
        if (now != old_bytes[i]) {
            stop_reason r;
            r.kind = stop_kind::watchpoint;
            r.tid = tid;
            r.watchpoint_id = e.id;
            r.watch_addr = virt_addr(e.addr);
            hit = r;
        }
    }
    if (hit) {
        queue_event(*hit);
    } else if (queue.empty() && !end) {
        for (pid_t p : paused) {
            if (thread_record* o = find(p); o != nullptr && o->st == tstate::stopped) {
                cont(*o, o->pending_signal);
                o->pending_signal = 0;
            }
        }
    }
    // Without a hit the caller goes on as at any exit stop (resumes, or reports a caught call).
    return hit.has_value() || lost;
}

}  // namespace ompdbg::tracer
