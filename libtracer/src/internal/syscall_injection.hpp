#pragma once
// Registers and injected system calls of a stopped thread, for the software watchpoints
// (watchpoints.cpp, watch_syscalls.cpp).

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace ompdbg::tracer::internal {

/// The page size of the guards software watchpoints put on the target's pages.
inline constexpr std::uint64_t guard_page_size = 4096;

/// PTRACE_GETREGS / PTRACE_SETREGS of a stopped thread; false when it is gone.
bool get_thread_regs(pid_t tid, user_regs_struct& r);
bool set_thread_regs(pid_t tid, const user_regs_struct& r);

/// Runs system call `nr` (a0, a1, a2) in the stopped thread `tid` through the `syscall`
/// instruction at `gadget`, and puts its registers `saved` back; a thread at a syscall-entry
/// stop gets `saved` moved back onto its own `syscall`, so that its call is made on resume.
/// Signals that arrived meanwhile are added to `deferred`. The call's result, nullopt when
/// it could not run.
std::optional<long> inject_syscall_into(pid_t tid, user_regs_struct& saved, std::uint64_t gadget, long nr,
                                        std::uint64_t a0, std::uint64_t a1, std::uint64_t a2,
                                        std::vector<int>& deferred);

}  // namespace ompdbg::tracer::internal
