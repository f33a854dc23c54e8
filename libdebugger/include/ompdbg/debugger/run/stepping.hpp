#pragma once
/// Source-level and instruction-level stepping: next, step, until, stepi, nexti, finish.
/// Line ranges come from the line table; a call is recognised by the return address the
/// call pushed and stepped over with a breakpoint at that address (checked against the
/// stack pointer so recursion does not stop early, as gdb does with frame ids).

#include <string_view>

#include "session.hpp"

namespace ompdbg::app {

enum class step_mode { next, step, until };

/// `next`/`step`/`until` (no argument) `count` times; stops early at any other stop.
void step_lines(session& s, step_mode mode, int count);
/// `stepi`/`nexti` `count` times.
void step_instructions(session& s, bool over_calls, int count);
/// `finish`: runs until the selected frame returns, prints the caller and the value.
void finish_frame(session& s);
/// `until LOCATION` / `advance LOCATION`: runs until the location or the current frame
/// returns.
void run_until_location(session& s, std::string_view location);

}  // namespace ompdbg::app
