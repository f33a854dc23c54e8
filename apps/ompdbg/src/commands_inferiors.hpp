#pragma once
/// Several inferiors of one program after a fork (kept by the model's run/fork_follow.hpp:
/// gdb's `follow-fork-mode child` and `detach-on-fork off`): `info inferiors`,
/// `inferior [N]`. An MPI job's ranks are inferiors too, but they are listed and selected
/// with the `mpi`/`rank` commands.

#include "ompdbg/debugger/run/fork_follow.hpp"
#include "ompdbg/tracer/stop_reason.hpp"
#include "session.hpp"

namespace ompdbg::app {

/// The program read from its host through the agent (no file of it here), as gdb names
/// it: "target:PATH" (empty: none). Kept after a detach; `file` discards it.
std::string& remote_program(session& s);

/// A process just attached (through ptrace or an agent) becomes the current inferior:
/// its program is loaded when none is, breakpoints are planted, its threads numbered and
/// its location printed as gdb does after `attach`.
void take_attached_process(session& s, std::unique_ptr<tracer::process> proc);

/// info inferiors, inferior [N].
void register_inferior_commands(command_table& t);

}  // namespace ompdbg::app
