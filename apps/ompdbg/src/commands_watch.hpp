#pragma once
/// Watchpoints as gdb shows them (`watch`, `rwatch`, `awatch`, `watch -l`, `info
/// watchpoints`), on libtracer's debug-register or software watchpoints. What is armed
/// and what a hit means are the model's (libdebugger breakpoints/watchpoint_arming.hpp,
/// watchpoint_hits.hpp: enable_watchpoint, delete_watchpoint, ... come from there).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

/// Shows a watchpoint hit decided by decide_stop as gdb does ("Hardware watchpoint 2: x",
/// "Old value = ...", "New value = ...", then the frame and source line).
void report_watchpoint_hit(session& s, const debugger::stop_report& r);

/// Shows a stop at the return address of a frame whose locals were watched (decide_stop's
/// watchpoint_scope): deletes those watchpoints with gdb's message, after hook-stop as the
/// CLI always did, then shows where the thread is.
void report_watchpoint_scope(session& s, const debugger::stop_report& r);

/// One entry of `info breakpoints` that is not a code breakpoint (a watchpoint, an event
/// catchpoint): gdb's Type and What columns, the lines under it, its JSON object.
struct info_breakpoint_row {
    int number = 0;
    std::string type;                  ///< "hw watchpoint", "catchpoint"
    bool enabled = true;
    std::string what;                  ///< "counter", "fork, process 1234 "
    std::vector<std::string> details;  ///< "\tbreakpoint already hit 2 times"
    nlohmann::json json;
};

/// The rows of every watchpoint, in number order.
std::vector<info_breakpoint_row> watchpoint_rows(session& s);

/// Arms the watchpoints again in a new process (after `run`): each expression is
/// evaluated anew; one that cannot be is reported and dropped (the model's
/// rearm_watchpoints, with gdb's "Could not insert watchpoint N: ...").
void rearm_watchpoints(session& s);

}  // namespace ompdbg::app
