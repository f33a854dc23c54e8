#pragma once
/// Several inferiors of one program after a fork: gdb's `follow-fork-mode child` and
/// `detach-on-fork off`, `info inferiors`, `inferior [N]`. An MPI job's ranks are
/// inferiors too, but they are listed and selected with the `mpi`/`rank` commands.

#include "ompdbg/tracer/stop_reason.hpp"
#include "session.hpp"

namespace ompdbg::app {

/// Whether the settings ask to keep fork children (follow-fork-mode child or
/// detach-on-fork off): the value for process::set_keep_fork_children before a resume.
bool keeps_fork_children(session& s);

/// Whether the settings ask to keep vfork children: gdb follows them only in
/// follow-fork-mode child (the parent, which shares its memory, is held meanwhile).
bool keeps_vfork_children(session& s);

/// A fork reported by a process that keeps its children (`why.new_tid`, stopped): the
/// child becomes a new inferior with the session's breakpoints planted; then, as gdb,
/// the child is followed (made current) or the parent stays current, and the one not
/// followed is detached when detach-on-fork is on, else left stopped. Prints gdb's
/// "[Attaching after ... fork to child process N]", "[New inferior N (process M)]",
/// "[Detaching after fork from parent process N]" lines.
void follow_fork(session& s, const tracer::stop_reason& why);

/// The current inferior, a followed vfork child, execs (`how` "exec") or ends ("exit"):
/// it no longer shares its parent's memory. With detach-on-fork on the parent is detached
/// as gdb does ("[Detaching vfork parent process N after child exec]", "[Inferior 1
/// (process N) detached]"); off, it stays, stopped in vfork(), to be resumed later.
void vfork_child_done(session& s, std::string_view how);

/// Throws gdb's error when the current inferior is a vfork parent whose child is still
/// held stopped: resuming it would wait in vfork() for that child for ever.
void check_vfork_parent_resumable(session& s);

/// Whether fork events are reported by the session's processes so that the child let go
/// is announced as gdb does (not in an MPI job, whose starter forks its ranks).
bool announces_forks(session& s);

/// gdb's "[Detaching after fork from child process N]" ("vfork" for a vfork) for a fork
/// whose child is let go; the tracer detaches it on the next resume.
void announce_released_child(session& s, const tracer::stop_reason& why);

/// Whether thread numbers are shown with their inferior ("2.1"), as gdb does once there
/// is more than one inferior (not for MPI ranks).
bool qualified_thread_numbers(session& s);

/// gdb's number of the current inferior (1 for the only one).
int current_inferior_number(session& s);

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
