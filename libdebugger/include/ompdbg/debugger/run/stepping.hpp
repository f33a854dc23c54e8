#pragma once
/// Source-level and instruction-level stepping: next, step, until, stepi, nexti, finish,
/// until/advance LOCATION. Line ranges come from the line table; a call is recognised by
/// the return address the call pushed and stepped over with a breakpoint at that address
/// (checked against the stack pointer so recursion does not stop early, as gdb does with
/// frame ids). Inlined copies are stepped as gdb's infrun does (stack/inline_frames.hpp).
/// Every stop is shown through the front end's `stop_reporter`; the target runs through
/// the model's run control (run/run_control.hpp).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "ompdbg/debugger/run/stop_reporter.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

class session;

enum class step_mode { next, step, until };

/// `next`/`step`/`until` (no argument) of the selected thread, `count` times; stops early
/// at any other stop. Throws "No thread selected." without one.
void step_lines(session& s, stop_reporter& report, step_mode mode, int count);

/// `stepi`/`nexti` (`over_calls`) of the selected thread, `count` times.
void step_instructions(session& s, stop_reporter& report, bool over_calls, int count);

/// What `finish` brought back.
struct finish_result {
    /// The frame returned to its caller and the stop was shown (false: another stop came
    /// first, or an inlined copy was stepped out of, which has no return).
    bool returned = false;
    /// The value it returned, as the SysV ABI puts it (rax/rdx, xmm0/xmm1, memory at rax);
    /// nullopt for void, without DWARF, or where gdb prints nothing.
    std::optional<dwarf::value> value;
};

/// `finish`: runs until the selected frame returns and shows the caller. Throws gdb's
/// "\"finish\" not meaningful in the outermost frame." and the like before anything runs;
/// `report.finishing(frame)` is called once the checks pass.
finish_result finish_frame(session& s, stop_reporter& report);

/// `until LOCATION` / `advance LOCATION`: runs until the location or the current frame
/// returns. Throws the resolver's message when the location names nothing.
void run_until_location(session& s, stop_reporter& report, std::string_view location);

/// Runs thread `tid` until it reaches `addr` with its stack pointer above `min_sp`
/// (the frame that called — so recursion does not stop early). Returns std::nullopt
/// when it got there; otherwise the stop that came first (already reported).
std::optional<tracer::stop_reason> run_to_address(session& s, stop_reporter& report, pid_t tid,
                                                  std::uint64_t addr, std::uint64_t min_sp);

}  // namespace ompdbg::debugger
