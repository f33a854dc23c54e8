#pragma once
/// What a watchpoint stop means, for every front end: which watchpoint triggered and its
/// value before and after (a write of the same value is no stop), and the watchpoints on
/// a frame's locals that end when the frame returns. The front end shows them (gdb's
/// "Hardware watchpoint N: x / Old value = ... / New value = ..." in the CLI); the values'
/// text is libdwarfview's formatting, in the selected frame.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/watchpoint.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

class session;

/// A watchpoint stop the user sees.
struct watchpoint_hit {
    int number = 0;
    /// The value changed (gdb shows "Old value", "New value"); false for a read or an access
    /// that left it as it was (gdb shows "Value").
    bool changed = false;
    std::vector<std::byte> old_bytes;   ///< the value last reported
    std::vector<std::byte> new_bytes;   ///< the value now
};

/// Decides a stop_kind::watchpoint stop: nullopt when no watchpoint of the session is
/// armed for it, when a write left the value unchanged or a computed expression cannot be
/// evaluated in the thread (the front end resumes, as gdb does). Else counts the hit and
/// makes the new value the one reported next time.
std::optional<watchpoint_hit> decide_watchpoint_hit(session& s, const tracer::stop_reason& why);

/// `bytes` as a value of `w`'s type, formatted as `print` would in the selected frame.
std::string watchpoint_value_text(session& s, const watchpoint& w, const std::vector<std::byte>& bytes);

/// At a breakpoint stop of `tid` at `addr`: the watchpoints on locals of a frame that
/// returned there (gdb deletes them: "the program has left the block in which its
/// expression is valid"), in number order; empty when the stop is not about their scope.
std::vector<int> watchpoints_out_of_scope(session& s, pid_t tid, std::uint64_t addr);

}  // namespace ompdbg::debugger
