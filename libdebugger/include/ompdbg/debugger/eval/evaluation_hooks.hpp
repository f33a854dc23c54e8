#pragma once
/// What evaluating an expression needs from the front end: showing a stop that interrupted
/// a call into the program (`print sq(7)` hitting a breakpoint in sq). The call itself is
/// the model's (infcall/inferior_call.hpp); the front end's session sets its hooks
/// (session::set_evaluation_hooks), and without them a call's stops are only decided.

#include "ompdbg/debugger/run/stop_decision.hpp"

namespace ompdbg::debugger {

class evaluation_hooks {
public:
    virtual ~evaluation_hooks() = default;

    /// A stop of the process while a called function ran, decided by decide_stop (a
    /// breakpoint, a signal, the process's end): the front end shows it as any stop (gdb's
    /// "Breakpoint 2, sq (x=7) at ..."), before the call ends in gdb's "The program being
    /// debugged stopped while in a function called from GDB." Returns false when it is not
    /// a stop for the user (a false condition, a dprintf): the call goes on.
    virtual bool show_stop(const stop_report& r) = 0;
};

}  // namespace ompdbg::debugger
