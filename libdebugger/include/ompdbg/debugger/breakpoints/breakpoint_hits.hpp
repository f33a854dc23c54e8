#pragma once
/// What a breakpoint hit means, for every front end: which user breakpoints stop the
/// thread (their conditions tested, hit and ignore counts kept, the agent's counts read
/// first), which dprintfs print, the location hit and the inline copies the stop hides;
/// then the temporary breakpoints the stop ends. The front end shows the stop (gdb's
/// "Breakpoint N, ..." in the CLI, a `stopped` event in the DAP server) and runs the
/// breakpoints' commands; nothing here prints.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ompdbg::debugger {

class session;

/// The model's decision about a hit of thread `tid` at an address.
struct breakpoint_hit_decision {
    std::vector<int> stopping;                  ///< breakpoint numbers that stop, in order
    std::size_t first_location = 0;             ///< index of the location hit in stopping.front()
    int hidden_inline_frames = 0;               ///< inlined copies the stop hides (set_hidden_inline_frames)
    /// "Error in testing condition for breakpoint N:\n...": a condition that could not be
    /// evaluated stops, as in gdb, and the front end shows the error.
    std::vector<std::string> condition_errors;
    std::vector<int> dprintfs;                  ///< dprintf breakpoints hit (their commands print)
    bool stops() const { return !stopping.empty(); }
};

/// Decides a hit of thread `tid` at run-time address `addr`: reads the agent's counters,
/// tests each breakpoint there (thread, condition in `tid`'s innermost frame, ignore count),
/// counts the hits and gives the agent the new ignore counts. Changes no selection and
/// hides no frame: the front end applies `hidden_inline_frames` when it shows the stop.
breakpoint_hit_decision decide_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr);

/// Deletes the temporary breakpoints (tbreak) among `stopping` and makes the planted
/// sites match the breakpoints left.
void end_temporary_breakpoints(session& s, const std::vector<int>& stopping);

}  // namespace ompdbg::debugger
