#pragma once
/// The type of $_siginfo: gdb's own layout of the x86-64 Linux siginfo (gdb builds it in
/// linux_get_siginfo_type_with_fields, independent of the C library's siginfo_t, whose
/// member names differ), so `print $_siginfo` and `$_siginfo._sifields._sigfault.si_addr`
/// answer as in gdb without the C library's debug information.

#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::debugger {

/// gdb's `siginfo` struct for x86-64 (128 bytes).
dwarf::type gdb_siginfo_type();

}  // namespace ompdbg::debugger
