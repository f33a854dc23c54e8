#pragma once
/// What evaluating an expression needs from a part of the debugger that is still the front
/// end's: run control, to call a function of the program (`print sq(7)`). The front end's
/// session sets its hooks (session::set_evaluation_hooks); frame_context calls them and
/// never the front end.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

class evaluation_hooks {
public:
    virtual ~evaluation_hooks() = default;

    /// Throws gdb's message when no function of the program may be called now (no
    /// process, `set may-call-functions off`).
    virtual void require_callable() = 0;
    /// Runs `call` in thread `tid` with its dummy frame below `stack_top` (nullopt: the
    /// thread's sp less the red zone) and returns the result; throws gdb's messages.
    virtual dwarf::value call_function(pid_t tid, const dwarf::function_call& call,
                                       std::optional<std::uint64_t> stack_top) = 0;
    /// Copies `bytes` below `below` (nullopt: the thread's sp less the red zone) for a call
    /// that follows; returns their address, the new bottom of the scratch area.
    virtual std::uint64_t push_scratch(pid_t tid, std::span<const std::byte> bytes,
                                       std::optional<std::uint64_t> below) = 0;
};

}  // namespace ompdbg::debugger
