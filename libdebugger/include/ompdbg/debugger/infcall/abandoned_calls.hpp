#pragma once
/// Calls abandoned in a stop (a breakpoint or a signal inside the called function, gdb's
/// "When the function is done executing, GDB will silently stop."): their return
/// breakpoint stays planted, and when the function returns to it the caller's registers
/// come back and the program stops without a word, as gdb pops its dummy frame.

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/registers.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

class session;

namespace infcall {

/// Remembers a call of thread `tid` abandoned with its return site at `return_to` (planted,
/// owned from now on by the session's registry), whose return leaves sp at `return_sp`. The
/// thread's stack, read at the stop, is read again with the call's dummy frame.
void remember_abandoned(session& s, tracer::process& p, pid_t tid, std::uint64_t return_sp, std::uint64_t return_to,
                        const tracer::registers& caller, std::optional<std::uint64_t> step_over);

/// True when `why` is the return of an abandoned call: the caller's registers are back, the
/// site removed, and the stop is to end the command silently.
bool finish_abandoned(session& s, const tracer::stop_reason& why);

/// The registers of the caller of an abandoned call of thread `tid` whose function returns
/// to `pc` with its sp at `sp`: where a backtrace goes on past gdb's dummy frame
/// (`<function called from gdb>`); nullopt when no call returns there.
std::optional<tracer::registers> abandoned_caller(session& s, pid_t tid, std::uint64_t pc, std::uint64_t sp);

/// `finish` out of an abandoned call's function: when thread `tid` stands at that call's
/// return, the caller's registers come back (as gdb pops the dummy frame) and the
/// registers the function returned with are given for its value; nullopt otherwise.
std::optional<tracer::registers> pop_abandoned_return(session& s, pid_t tid);

}  // namespace infcall
}  // namespace ompdbg::debugger
