#pragma once
/// What a stop of the current process means for the user, decided once for every front end
/// (issue 19): the model's side of a stop (the agent's counters read, an abandoned call's
/// return popped, hit counts kept, a vfork parent released, `handle SIG nopass` honoured,
/// catchpoints counted, $_exitcode set) is done here, and the front end only shows the
/// result (gdb's "Breakpoint 1, ..." in the CLI, a `stopped` event in the DAP server).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint_hits.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_hits.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

class session;

/// What kind of stop the user sees.
enum class stop_class {
    not_for_user,         ///< nothing to show: the front end resumes (an event, a write of the same value)
    process_ended,        ///< exited or killed by a signal (`why` says which); the process is still held
    breakpoint_hit,       ///< user breakpoints at `pc`: `breakpoint` says which stop and which dprintfs print
    watchpoint_hit,       ///< `watchpoint` triggered
    watchpoint_scope,     ///< `watchpoints_ended` left their frame's block (the front end deletes them)
    signal,               ///< `why.signo` stopped the thread
    interrupt,            ///< Ctrl-C or a pause: shown as SIGINT (`why.signo` is SIGINT)
    process_event,        ///< exec, fork/vfork or a system call; `catchpoint` caught it (0: none did)
    step,                 ///< a single step ended (`stepi` outside the stepping engine)
    abandoned_call_done,  ///< an abandoned inferior call returned: gdb stops without a word
};

/// A stop as the user sees it. Only the members of its `kind` are set.
struct stop_report {
    stop_class kind = stop_class::not_for_user;
    pid_t tid = 0;               ///< the thread that stopped
    tracer::stop_reason why;     ///< the tracer's stop (signo SIGINT for an interrupt)
    pid_t pid = 0;               ///< process_ended: the process that ended
    std::uint64_t pc = 0;        ///< breakpoint_hit, watchpoint_scope: the address the thread stands at
    breakpoint_hit_decision breakpoint;        ///< breakpoint_hit (may stop nobody and only print dprintfs)
    std::optional<watchpoint_hit> watchpoint;  ///< watchpoint_hit
    std::vector<int> watchpoints_ended;        ///< watchpoint_scope, in number order
    int catchpoint = 0;          ///< process_event: the catchpoint counted (0: none catches it)

    /// True when the front end shows this stop and the command ends (a breakpoint hit only
    /// when one of its breakpoints stops).
    bool for_user() const {
        return kind != stop_class::not_for_user && (kind != stop_class::breakpoint_hit || breakpoint.stops());
    }
};

/// Decides stop `why` of the current process, doing the model's part of it (see above);
/// changes no selection and prints nothing. The process is not dropped at its end: the
/// front end shows the end, then drops it (session::drop_process).
stop_report decide_stop(session& s, const tracer::stop_reason& why);

}  // namespace ompdbg::debugger
