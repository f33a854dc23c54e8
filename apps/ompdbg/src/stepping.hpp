#pragma once
/// The CLI's stepping commands: next, step, until, stepi, nexti, finish, until/advance
/// LOCATION. The model steps (ompdbg/debugger/run/stepping.hpp); the CLI shows its stops
/// (cli_stop_reporter.hpp) and prints `finish`'s returned value.

#include <string_view>

#include "session.hpp"
#include "ompdbg/debugger/run/stepping.hpp"

namespace ompdbg::app {

using debugger::step_mode;

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
