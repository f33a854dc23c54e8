#pragma once
/// Resuming the target and waiting for the next stop a user must see: thread and library
/// events are reported and resumed over, signals gdb does not stop for are passed on, and
/// Ctrl-C interrupts the wait.

#include <optional>

#include "session.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

/// Installs the SIGINT handler (Ctrl-C interrupts a running target; at the prompt it is
/// ignored).
void install_interrupt_handler();
/// Whether Ctrl-C was pressed since the last call (which clears it): a `while` loop of
/// the command language stops there with "Quit", as in gdb.
bool take_interrupt_request();

/// Handles the events that never end a command (new thread, thread exit, library load,
/// exec, signals gdb passes silently). Returns true when the event was consumed.
bool consume_background_event(session& s, const tracer::stop_reason& why);

/// Resumes every thread and waits for the next event that is not consumed by
/// consume_background_event. Breakpoint hits of other threads in the same stop are reported
/// by the tracer on the following resumes, one at a time (as gdb does). With `quick_hits`
/// (continue), a hit that its thread alone can decide is returned with the other threads
/// still running (stop_reason::others_running): report_breakpoint_hit stops them if the hit
/// is shown, or the caller resumes it.
tracer::stop_reason resume_and_wait(session& s, bool quick_hits = false);

/// Reports `why` as gdb does (breakpoint, signal, exit, interrupt). Returns false when the
/// stop is not for the user (a breakpoint whose condition is false, an ignore count).
bool report_stop(session& s, const tracer::stop_reason& why);

/// `continue`: resumes until a stop the user sees (reporting queued hits first) and
/// reports it; breakpoint `commands` that say `continue` resume again.
void continue_until_stop(session& s);

/// Single-steps `tid`, consuming background events; the stop (single_step normally).
tracer::stop_reason step_one_instruction(session& s, pid_t tid);

}  // namespace ompdbg::app
