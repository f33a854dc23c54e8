#pragma once
/// The CLI's run control: Ctrl-C, reporting stops and `continue`, over the model's run
/// control (ompdbg/debugger/run/run_control.hpp: resume_and_wait, consume_background_event,
/// take_interrupt_request).

#include <optional>

#include "session.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

/// Installs the SIGINT handler (Ctrl-C interrupts a running target through
/// debugger::interrupt_running_process; at the prompt it is ignored).
void install_interrupt_handler();

/// Reports `why` as gdb does (breakpoint, signal, exit, interrupt). Returns false when the
/// stop is not for the user (a breakpoint whose condition is false, an ignore count).
bool report_stop(session& s, const tracer::stop_reason& why);

/// `continue`: resumes until a stop the user sees (reporting queued hits first) and
/// reports it; breakpoint `commands` that say `continue` resume again.
void continue_until_stop(session& s);

}  // namespace ompdbg::app
