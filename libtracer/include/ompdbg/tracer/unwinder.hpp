#pragma once
/// Stack unwinding through libunwind-ptrace's DWARF CFI unwinder, driven by our own memory
/// and register accessors (so reads go through the target's cached read_memory, and core
/// files unwind the same way). Works through frames without debug info (libc).

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/tracer/registers.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer {

struct frame {
    virt_addr pc;                  ///< frame 0: the thread's pc; outer frames: return address
    virt_addr cfa;                 ///< canonical frame address (the caller's sp); for the
                                   ///< outermost frame, its sp when nothing better is known
    virt_addr sp;
    bool is_signal_frame = false;  ///< a signal trampoline (gdb: <signal handler called>)
    /// Registers recovered for this frame (DWARF numbering); nullopt when not recoverable.
    std::vector<std::optional<std::uint64_t>> dwarf_regs;   ///< index: DWARF regno 0..16
    /// The pc to use for symbol/line lookup: pc - 1 for outer (call-return) frames; the
    /// pc itself for frame 0, a signal trampoline and the frame a signal interrupted.
    virt_addr lookup_pc() const { return is_caller_frame && !is_signal_frame ? pc - 1 : pc; }
    /// True when pc is a return address (frames > 0, except the one a signal interrupted).
    bool is_caller_frame = false;
};

/// Unwinding state of one target: a libunwind remote address space with its global
/// cache, and the unwind-table location of each module. Keep one per target (the free
/// `backtrace` below keeps them for you). Not thread-safe; the target must outlive it.
class unwinder {
public:
    explicit unwinder(target& tgt);
    ~unwinder();
    unwinder(const unwinder&) = delete;
    unwinder& operator=(const unwinder&) = delete;

    /// Unwinds `tid`, innermost first, at most `max_frames` frames. Throws only when the
    /// thread does not exist or its registers cannot be read; a corrupt stack ends the
    /// list at the last frame that could be trusted (pc mapped, CFA increasing).
    std::vector<frame> backtrace(pid_t tid, std::size_t max_frames = 256);
    /// The same from registers `from` instead of the thread's own (the caller of a function
    /// the debugger called, whose registers it saved); memory is the thread's process's.
    std::vector<frame> backtrace_from(pid_t tid, const registers& from, std::size_t max_frames = 256);
    /// Drops every cached unwind table and libunwind's caches. Not needed for resumes
    /// (no memory is cached across calls) nor for library loads (the module list is
    /// compared on every call); call it when code was rewritten in place.
    void invalidate();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Unwinds `tid` of `tgt`, innermost first, at most `max_frames`. Never throws for a
/// corrupt stack: it stops at the first frame it cannot unwind. Reuses a cached
/// `unwinder` per target (keyed by the target and its pid, checked against its modules).
std::vector<frame> backtrace(target& tgt, pid_t tid, std::size_t max_frames = 256);
/// unwinder::backtrace_from with the cached unwinder of `tgt`.
std::vector<frame> backtrace_from(target& tgt, pid_t tid, const registers& from, std::size_t max_frames = 256);

}  // namespace ompdbg::tracer
