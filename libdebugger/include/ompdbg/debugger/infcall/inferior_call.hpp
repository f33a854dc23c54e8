#pragma once
/// Calling a function of the program from an expression (`print sq(7)`, `call dump(p)`), as
/// gdb 13's call_function_by_hand does: a dummy frame below the selected thread's stack,
/// the return address at the program's entry point (where a breakpoint catches the
/// return), the selected thread alone running (run/run_control.hpp), its registers put back
/// afterwards. A stop that interrupts the call is decided by decide_stop
/// (run/stop_decision.hpp) and shown by the front end (evaluation_hooks::show_stop) before
/// the call ends in gdb's message.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::debugger {

class session;

namespace infcall {

/// The session's live process when calls may run in it; else gdb's message (no process,
/// `set may-call-functions off`), in gdb's order.
tracer::process& require_callable(session& s);

/// Runs `call` in thread `tid` of the session's live process and returns the result (a
/// void value for void functions). Below `stack_top` (nullopt: the thread's sp less the
/// 128-byte red zone) the dummy frame is built. Throws gdb's messages: no process, calls
/// forbidden (`set may-call-functions off`), a breakpoint or a signal in the called
/// function (the stop is shown first through the session's evaluation hooks; with `set
/// unwindonsignal on` a signalled call's context is restored, otherwise the thread stays
/// where it stopped), the program exiting.
dwarf::value call_function(session& s, pid_t tid, const dwarf::function_call& call,
                           std::optional<std::uint64_t> stack_top);

/// Where `bytes` are copied for a call that follows (a string literal passed as `char *`):
/// below `below` (nullopt: the thread's sp less the red zone), 16-byte aligned. Returns
/// the address, which is also the new bottom of the scratch area.
std::uint64_t push_scratch(session& s, pid_t tid, std::span<const std::byte> bytes,
                           std::optional<std::uint64_t> below);

}  // namespace infcall
}  // namespace ompdbg::debugger
