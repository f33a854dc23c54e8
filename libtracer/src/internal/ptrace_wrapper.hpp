#pragma once
// The one place where libtracer calls ptrace, waitpid, process_vm_readv and tgkill (LLDB's
// NativeProcessLinux::PtraceWrapper). Each call clears errno, logs on channel `ptrace`
// (waits on channel `wait`) and reports failure either by throwing ompdbg::error
// (`checked` forms) or by returning the errno (`try_` forms, for calls that routinely fail,
// such as a request on a thread that has just exited).

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ompdbg::tracer::internal {

/// Result of a ptrace request that may fail routinely: `err` is 0 on success.
struct ptrace_result {
    long value = 0;
    int err = 0;
    explicit operator bool() const { return err == 0; }
};

/// ptrace(request, tid, addr, data) without throwing; logs the call and its errno.
ptrace_result try_ptrace(__ptrace_request request, pid_t tid, void* addr = nullptr,
                         void* data = nullptr);
/// Same, throwing "<what>: <strerror>" on failure.
long ptrace_checked(__ptrace_request request, pid_t tid, void* addr, void* data,
                    const char* what);

/// Counts the ptrace requests that may let a tracee run or change its memory (CONT,
/// SYSCALL, SINGLESTEP, LISTEN, DETACH, KILL, POKE*, INTERRUPT: the thread runs until it
/// stops) and the stops waitpid reports, for every tracee of this debugger: memory read
/// while the count stays the same is still what the stopped tracees hold.
std::uint64_t resume_generation();

/// Human-readable name of a ptrace request for logs.
const char* request_name(int request);

/// waitpid(tid, &status, options | __WALL) retried on EINTR. Returns the pid reported, 0
/// for WNOHANG with nothing to report, or -errno (e.g. -ECHILD when `tid` is not our child
/// or tracee any more).
pid_t wait_tid(pid_t tid, int* status, int options);

/// process_vm_readv of one range; returns bytes read (possibly short) or -errno.
long read_process_memory(pid_t pid, std::uint64_t addr, std::span<std::byte> out);

/// tgkill(pid, tid, sig); returns 0 or errno.
int send_thread_signal(pid_t pid, pid_t tid, int sig);

/// PTRACE_GETSIGINFO; nullopt when the thread is gone.
std::optional<siginfo_t> get_siginfo(pid_t tid);
/// PTRACE_GETEVENTMSG; nullopt when the thread is gone.
std::optional<unsigned long> get_event_msg(pid_t tid);

}  // namespace ompdbg::tracer::internal
