#pragma once
/// Making, conditioning and deleting logical breakpoints, for every front end (the CLI's
/// `break`, `tbreak`, `dprintf`, `condition`, the DAP server's setBreakpoints and
/// setFunctionBreakpoints): the breakpoint resolved (breakpoint_resolver.hpp), kept in the
/// session, its sites planted and the fast-breakpoint agent told (fast_breakpoints.hpp).
/// What the user is told of it is the front end's.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger {

/// A breakpoint as asked for.
struct breakpoint_request {
    std::string spec;                   ///< FUNCTION, FILE:LINE, LINE or *ADDRESS (not empty)
    std::string condition;              ///< empty: none
    bool temporary = false;             ///< `tbreak`: deleted when hit
    /// A dprintf: its hits run `commands` (the printf line) and go on.
    bool dprintf = false;
    std::vector<std::string> commands;
    std::optional<pid_t> thread_tid;    ///< `thread N`: hits of that thread only
    std::optional<std::vector<int>> ranks;   ///< `rank LIST`; nullopt: the ranks of the focus
};

/// The breakpoint `r` asks for, not numbered nor kept yet: its locations now, or pending
/// (no location) with `why` holding gdb's message (`Function "x" not defined.`, ...). A
/// resolved breakpoint keeps its spec with a bare LINE bound to its file (bind_line_spec).
/// Throws for an address expression that cannot be evaluated.
breakpoint make_breakpoint(session& s, const breakpoint_request& r, std::string& why);

/// Keeps `bp` in the session, numbered (the next number unless it has one), and for a
/// resolved breakpoint plants its sites (the agent loaded into an attached process for a
/// condition or a dprintf). Returns its number. Throws "Cannot insert breakpoint N.\nWHY"
/// when a site cannot be planted; the breakpoint stays.
int add_breakpoint(session& s, breakpoint bp);

/// `condition N COND`: sets breakpoint `number`'s condition (empty: none), checking its
/// syntax first, and gives the agent the new one. Throws "No breakpoint number N." and the
/// parser's errors.
void set_breakpoint_condition(session& s, int number, const std::string& condition);

/// Deletes breakpoint `number` and removes the sites no other breakpoint uses; false
/// when there is no such breakpoint.
bool delete_breakpoint(session& s, int number);

}  // namespace ompdbg::debugger
