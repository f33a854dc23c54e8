#pragma once
/// The stack as the user sees it: physical frames from the unwinder, each expanded into
/// its inlined frames (innermost first), with function, source line and module resolved.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::app {

class session;

struct stack_frame {
    int level = 0;                          ///< gdb's frame number
    std::size_t physical_index = 0;         ///< index into the unwinder's frames
    tracer::frame physical;                 ///< registers/cfa of the physical frame
    const tracer::loaded_module* module = nullptr;
    std::optional<dwarf::function> function;   ///< the (possibly inlined) function
    bool is_inlined = false;                ///< this virtual frame is an inlined copy
    std::optional<dwarf::line_entry> line;  ///< for inlined callers: the call site
    std::string symbol_name;                ///< minimal-symbol name when no DWARF ("__libc_start_call_main")
    std::uint64_t symbol_offset = 0;
    /// The pc shown for this frame (the same for all inline frames of one physical frame).
    std::uint64_t pc() const { return physical.pc.addr(); }
};

/// Builds the user-visible stack of thread `tid` (cached by the session until resume).
std::vector<stack_frame> build_stack(session& s, pid_t tid, std::size_t max_frames = 256);

}  // namespace ompdbg::app
