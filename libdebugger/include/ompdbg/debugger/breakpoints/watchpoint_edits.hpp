#pragma once
/// Making a watchpoint, for every front end (the CLI's `watch`, `rwatch`, `awatch`, `watch
/// -l`): the expression evaluated in the selected frame, gdb's reasons when it cannot be
/// watched, the memory armed (watchpoint_arming.hpp), a local's scope planted where its
/// frame returns, the watchpoint numbered and kept. What the user is told of it ("Hardware
/// watchpoint 2: x") is the front end's.

#include <functional>
#include <string>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/watchpoint.hpp"

namespace ompdbg::debugger {

/// A watchpoint as asked for.
struct watchpoint_request {
    std::string expression;                            ///< as typed, without -location (not empty)
    tracer::watch_kind kind = tracer::watch_kind::write;
    bool location = false;                             ///< -location: the address now, whatever its frame does
};

/// Makes, arms and keeps the watchpoint `r` asks for; returns its number. `choose_mode`
/// is asked once the expression is known watchable (the front end's setting and what it
/// tells the user about the debug registers); a value too wide for one debug register, on a
/// remote process, is watched in software. Throws gdb's messages ("Cannot watch constant
/// value `1'.", ...) and the evaluator's.
int add_watchpoint(session& s, const watchpoint_request& r, const std::function<tracer::watch_mode()>& choose_mode);

}  // namespace ompdbg::debugger
