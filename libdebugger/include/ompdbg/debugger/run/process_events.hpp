#pragma once
/// Which process events (fork, vfork, exec, system calls) the session's catchpoints stop at
/// (issue 19: moved from the CLI, which reports the stops).

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// True when an enabled `catch fork|vfork|exec|syscall` catchpoint wants this event
/// (`why`: a fork, exec or system call stop) to stop.
bool catches_process_event(session& s, const tracer::stop_reason& why);

}  // namespace ompdbg::debugger
