#pragma once
/// The type of $_siginfo: gdb's own layout of the x86-64 Linux siginfo (gdb builds it in
/// linux_get_siginfo_type_with_fields, independent of the C library's siginfo_t, whose
/// member names differ), so `print $_siginfo` and `$_siginfo._sifields._sigfault.si_addr`
/// answer as in gdb without the C library's debug information.

#include <sys/types.h>

#include <optional>

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

/// gdb's `siginfo` struct for x86-64 (128 bytes).
dwarf::type gdb_siginfo_type();

class session;

/// gdb's `$_siginfo`: the siginfo of the last signal thread `tid` stopped with, in gdb's
/// layout (gdb_siginfo_type). nullopt (void) without a live process; throws "Unable to
/// read siginfo" when the thread has stopped with no signal.
std::optional<dwarf::value> siginfo_value(session& s, pid_t tid);

}  // namespace ompdbg::debugger
