#pragma once
/// Signals and process-event catchpoints (commands_signals.cpp), for run control.

#include <vector>

#include "commands_watch.hpp"
#include "session.hpp"
#include "ompdbg/debugger/run/process_events.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

/// Shows a process event decided by decide_stop as gdb does ("Catchpoint N (forked process
/// PID), " + the frame line); selects the thread, and shows nothing more when no
/// catchpoint caught it.
void report_process_event(session& s, const debugger::stop_report& r);

/// The `info breakpoints` rows of the event catchpoints (catch fork/vfork/exec/syscall).
std::vector<info_breakpoint_row> catchpoint_rows(session& s);
/// Deletes catchpoint `number` (false: no such catchpoint), or all of them.
bool delete_catchpoint(session& s, int number);
void delete_all_catchpoints(session& s);
/// Enables or disables catchpoint `number`; false when there is no such catchpoint.
bool enable_catchpoint(session& s, int number, bool enable);

}  // namespace ompdbg::app
