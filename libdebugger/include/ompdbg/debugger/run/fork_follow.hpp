#pragma once
/// Several inferiors of one program after a fork (issue 19: moved from the CLI): gdb's
/// `follow-fork-mode` and `detach-on-fork`, vfork parents held until their child execs or
/// exits, and the numbering of inferiors. What happens is reported to the session's
/// observer (fork_followed, inferior_added, fork_parent_detached, vfork_parent_detached,
/// inferior_detached, fork_child_released). An MPI job's ranks are inferiors too: forks
/// are neither kept nor announced there (the starter forks its ranks).

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string_view>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// Whether the inferiors are an MPI job's ranks (or a job is acquired).
bool inferiors_are_ranks(session& s);

/// Whether the settings ask to keep fork children (follow-fork-mode child or
/// detach-on-fork off): the value for process::set_keep_fork_children before a resume.
bool keeps_fork_children(session& s);

/// Whether the settings ask to keep vfork children: gdb follows them only in
/// follow-fork-mode child (the parent, which shares its memory, is held meanwhile).
bool keeps_vfork_children(session& s);

/// A fork reported by a process that keeps its children (`why.new_tid`, stopped): the
/// child becomes a new inferior with the session's breakpoints planted; then, as gdb,
/// the child is followed (made current) or the parent stays current, and the one not
/// followed is detached when detach-on-fork is on, else left stopped.
void follow_fork(session& s, const tracer::stop_reason& why);

/// The current inferior, a followed vfork child, execs (`how` "exec") or ends ("exit"):
/// it no longer shares its parent's memory. With detach-on-fork on the parent is detached
/// as gdb does; off, it stays, stopped in vfork(), to be resumed later.
void vfork_child_done(session& s, std::string_view how);

/// Throws gdb's error when the current inferior is a vfork parent whose child is still
/// held stopped: resuming it would wait in vfork() for that child for ever.
void check_vfork_parent_resumable(session& s);

/// Whether fork events are reported by the session's processes so that the child let go
/// is announced as gdb does (not in an MPI job, whose starter forks its ranks).
bool announces_forks(session& s);

/// Reports a fork whose child is let go (observer's fork_child_released); the tracer
/// detaches it on the next resume.
void announce_released_child(session& s, const tracer::stop_reason& why);

/// Whether thread numbers are shown with their inferior ("2.1"), as gdb does once there
/// is more than one inferior (not for MPI ranks).
bool qualified_thread_numbers(session& s);

/// gdb's number of the current inferior (1 for the only one).
int current_inferior_number(session& s);

/// The index of the inferior of process `pid` (kept after it ended), if it is listed.
std::optional<std::size_t> inferior_of_pid(session& s, pid_t pid);

/// Detaches the process of inferior `index` (not the current one) and forgets its state;
/// reports inferior_detached.
void detach_inferior(session& s, std::size_t index);

}  // namespace ompdbg::debugger
