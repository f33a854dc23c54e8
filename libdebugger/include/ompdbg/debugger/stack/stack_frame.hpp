#pragma once
/// One frame of the stack as the user sees it: a physical frame from the unwinder, or one of
/// the inlined copies it is expanded into, with function, source line and module resolved.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::debugger {

struct stack_frame {
    pid_t tid = 0;                          ///< the thread whose stack this frame is part of
    int level = 0;                          ///< gdb's frame number
    std::size_t physical_index = 0;         ///< index into the unwinder's frames
    tracer::frame physical;                 ///< registers/cfa of the physical frame
    const tracer::loaded_module* module = nullptr;
    std::optional<dwarf::function> function;   ///< the (possibly inlined) function
    bool is_inlined = false;                ///< this virtual frame is an inlined copy
    /// gdb's dummy frame of a function called from the debugger and stopped in
    /// (`<function called from gdb>`): its callers are those of the thread before the call.
    bool is_dummy = false;
    /// Position in its physical frame's chain: 0 innermost; callers of inlined copies > 0
    /// (gdb prints no pc for them: they are "at" the call site).
    std::size_t inline_depth = 0;
    std::optional<dwarf::line_entry> line;  ///< for inlined callers: the call site
    std::string symbol_name;                ///< minimal-symbol name when no DWARF ("__libc_start_call_main")
    std::uint64_t symbol_offset = 0;
    /// The pc shown for this frame (the same for all inline frames of one physical frame).
    std::uint64_t pc() const { return physical.pc.addr(); }
};

}  // namespace ompdbg::debugger
