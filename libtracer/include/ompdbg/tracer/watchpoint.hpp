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
    /// Limits: a system call that writes a protected page fails with EFAULT in the
    /// program instead of being caught (the kernel does not fault there).
    software,
};

/// Number of hardware watchpoint slots (x86-64 DR0-DR3).
inline constexpr int hardware_watch_slots = 4;

/// True when a debug-register watchpoint really traps on this machine. Probed once per
/// debugger process (a forked child writes a variable watched through DR0/DR7) and
/// cached; some virtual machines accept the register writes but never trap.
bool hardware_watchpoints_trap();

}  // namespace ompdbg::tracer
