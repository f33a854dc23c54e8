#pragma once
/// Reports stops as gdb does: breakpoint hits, signals, exits, thread events, and the
/// "frame line + source line" after a step.

#include <string>

#include "session.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_hits.hpp"
#include "ompdbg/debugger/run/signal_names.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

#include <nlohmann/json.hpp>

namespace ompdbg::app {

using debugger::signal_description;
using debugger::signal_name;

/// The source line after a frame line: "82\t    if (n <= 1) {", or "82\tin structs.c"
/// when the file cannot be read; empty when the frame has no line.
std::string source_line_for(session& s, const stack_frame& f);

/// Prints event `kind` whose text is `text` followed by the source line of frame `f`: a
/// source line that gdb prints as an error (its file cannot be read) goes to stderr after
/// the event in text mode, as gdb's print_sys_errmsg; JSON keeps it in the event's text.
void event_with_source(session& s, const std::string& kind, nlohmann::json fields, std::string text,
                       const stack_frame& f);

/// Prints where thread `tid` is: with `frame_line` the frame line ("factorial (n=5) at
/// structs.c:82") then the source line; without, only the source line (prefixed by the pc
/// when it is not at the start of a line, as after `stepi`).
void print_location(session& s, pid_t tid, bool frame_line);

/// gdb's name of a thread in stop lines: "Thread 2 \"prog\"" ("Thread 2.1 ..." once there
/// are several inferiors).
std::string stop_thread_label(session& s, pid_t tid);

/// "[Switching to Thread 0x... (LWP n)]" when `tid` is not the selected thread of a
/// multi-threaded program; selects it.
void switch_to_stopped_thread(session& s, pid_t tid);

/// Reports the end of the process (exited / terminated), decided by decide_stop, and drops it.
void report_process_end(session& s, const debugger::stop_report& r);

/// Reports a signal stop ("Program received signal SIGSEGV, Segmentation fault.").
void report_signal(session& s, const tracer::stop_reason& why);

/// Handles a user-breakpoint hit of `tid` at `addr`: conditions, ignore counts, hit counts,
/// the report, temporary breakpoints and `commands`. Returns false when no breakpoint
/// wants to stop (the caller resumes).
bool report_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr);

/// The same for a hit already decided (decide_stop): shows it, prints the dprintfs, ends
/// the temporary breakpoints and runs `commands`; the hit counts are not counted again.
bool report_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr, const breakpoint_hit_decision& hit);

/// Shows stop `r`, decided by decide_stop, as gdb does (breakpoint, signal, exit,
/// interrupt). Returns false when it is not for the user (a breakpoint whose condition is
/// false, an ignore count, a dprintf that prints and goes on).
bool show_stop(session& s, const debugger::stop_report& r);

}  // namespace ompdbg::app
