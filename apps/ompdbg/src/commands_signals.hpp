#pragma once
/// Signals and process-event catchpoints (commands_signals.cpp), for run control.

#include "session.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

/// True when a `catch fork|vfork|exec` catchpoint wants this fork/exec event to stop.
bool catches_process_event(session& s, const tracer::stop_reason& why);

/// Reports a caught fork/vfork/exec as gdb does ("Catchpoint N (forked process PID), "
/// + the frame line).
void report_process_event(session& s, const tracer::stop_reason& why);

}  // namespace ompdbg::app
