#pragma once
/// Data watchpoints of a live process: x86-64 debug registers where they trap, otherwise
/// software watchpoints that write-protect the watched pages and single-step only the
/// instructions that fault there.

#include <cstddef>
#include <cstdint>

#include "ompdbg/base/addr.hpp"

namespace ompdbg::tracer {

/// What a watchpoint reacts to: writes (`watch`), reads (`rwatch`), both (`awatch`).
enum class watch_kind { write, read, access };

/// How a watchpoint is implemented.
enum class watch_mode {
    /// One of the 4 debug registers (DR0-3, DR7) on every thread, threads created later
    /// included: free until it triggers. x86 has no read-only debug watch: `read` uses
    /// read/write and the caller tells reads from writes by the value, as gdb does.
    hardware,
    /// The watched pages are made read-only (write) or inaccessible (read, access) in the
    /// target with an injected mprotect; a fault there is single-stepped with the page
    /// restored, then the page is protected again. Other faults pass to the program.
    /// A system call that writes a protected page (read(2) into a watched buffer) fails
    /// with EFAULT instead, as the kernel does not fault there: while guards are armed the
    /// threads run with PTRACE_SYSCALL, and a call that returns EFAULT is made again with
    /// every guard lifted and the other threads stopped; a watched value it changed is
    /// reported at the instruction after the call.
    /// Limits: while guards are armed every system call costs two ptrace stops (entry and
    /// exit; code between calls runs at full speed); a call made by a single-step (`stepi`
    /// over `syscall`) or through `int 0x80` still fails with EFAULT; a call that failed
    /// with EFAULT for a bad pointer of the program's own is made twice; `rwatch` does not
    /// see a call reading the page (the kernel reads it without a fault).
    software,
};

/// Number of hardware watchpoint slots (x86-64 DR0-DR3).
inline constexpr int hardware_watch_slots = 4;

/// True when a debug-register watchpoint really traps on this machine. Probed once per
/// debugger process (a forked child writes a variable watched through DR0/DR7) and
/// cached; some virtual machines accept the register writes but never trap.
bool hardware_watchpoints_trap();

}  // namespace ompdbg::tracer
