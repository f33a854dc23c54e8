#pragma once
/// Stack unwinding through libunwind-ptrace's DWARF CFI unwinder, driven by our own memory
/// and register accessors (so reads go through the target's cached read_memory, and core
/// files unwind the same way). Works through frames without debug info (libc).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer {

struct frame {
    virt_addr pc;                  ///< frame 0: the thread's pc; outer frames: return address
    virt_addr cfa;                 ///< canonical frame address
    virt_addr sp;
    bool is_signal_frame = false;
    /// Registers recovered for this frame (DWARF numbering); nullopt when not recoverable.
    std::vector<std::optional<std::uint64_t>> dwarf_regs;   ///< index: DWARF regno 0..16
    /// The pc to use for symbol/line lookup: pc - 1 for outer (call-return) frames.
    virt_addr lookup_pc() const { return is_caller_frame ? pc - 1 : pc; }
    bool is_caller_frame = false;
};

/// Unwinds `tid` of `tgt`, innermost first, at most `max_frames`. Never throws for a
/// corrupt stack: it stops at the first frame it cannot unwind.
std::vector<frame> backtrace(target& tgt, pid_t tid, std::size_t max_frames = 256);

}  // namespace ompdbg::tracer
