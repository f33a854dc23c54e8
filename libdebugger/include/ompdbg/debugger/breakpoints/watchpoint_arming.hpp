#pragma once
/// Watchpoints in the process, for every front end: what is armed for each watchpoint
/// (debug registers or write-protected pages, one piece per register a value needs, every
/// piece a computed expression is read from), its value now, and what enabling, deleting
/// or moving to a new process does to them. The front end makes watchpoints (the CLI's
/// `watch`) and tells the user what was dropped; nothing here prints.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/breakpoints/watchpoint.hpp"

namespace ompdbg::debugger {

class session;

/// The pieces a debug register can watch (1, 2, 4 or 8 aligned bytes) covering a range;
/// software watchpoints take the range whole.
std::vector<std::pair<std::uint64_t, std::size_t>> watch_pieces(std::uint64_t addr, std::size_t size,
                                                                tracer::watch_mode mode);

/// The watched lvalue's bytes now (zeros where the memory cannot be read).
std::vector<std::byte> watched_bytes(session& s, const watchpoint& w);

/// A computed expression's value (a watchpoint on `a + b`), evaluated in thread `tid`'s
/// innermost frame (the selected frame when 0); nullopt when it cannot be evaluated now.
std::optional<std::vector<std::byte>> computed_bytes(session& s, const watchpoint& w, pid_t tid = 0);

/// Arms `w` in the session's process, its value now the one compared with. Throws when a
/// piece cannot be armed (none stays armed then).
void arm_watchpoint(session& s, watchpoint& w);

/// arm_watchpoint, except that a remote agent with no debug register left makes a write
/// watchpoint a software one (single steps through the agent), as gdb's "Watchpoint N".
void arm_watchpoint_or_fall_back(session& s, watchpoint& w);

/// Removes what is armed for `w` (and its scope breakpoint) from a live process.
void disarm_watchpoint(session& s, watchpoint& w);

/// Enables or disables watchpoint `number` (disarmed in the process while disabled);
/// false when there is no such watchpoint.
bool enable_watchpoint(session& s, int number, bool enable);

/// Deletes watchpoint `number` (false: no such watchpoint), or all of them.
bool delete_watchpoint(session& s, int number);
void delete_all_watchpoints(session& s);

/// A watchpoint that could not be kept in a new process, and why ("" for a local of a
/// frame the new process does not have).
struct dropped_watchpoint {
    int number = 0;
    std::string error;
};

/// Arms the watchpoints again in a new process (after `run`): each expression is
/// evaluated anew; the ones that cannot be (and locals, whose frame is gone) are dropped.
std::vector<dropped_watchpoint> rearm_watchpoints(session& s);

/// Arms the watchpoints in a fork child that became the current process while its parent
/// was let go (follow-fork-mode child): the child has the parent's memory, so every
/// watchpoint keeps its address and old value, and a local's scope follows the thread
/// that forked (`parent_tid`) into the child. Returns the ones dropped.
std::vector<dropped_watchpoint> move_watchpoints_to_child(session& s, pid_t parent_tid);

}  // namespace ompdbg::debugger
