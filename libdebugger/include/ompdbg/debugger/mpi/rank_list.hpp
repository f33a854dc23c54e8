#pragma once
/// The ranks of an MPI job as the user names them: `rank 0-3,6` / `all` parsed and printed
/// ("0-3,6", STAT's rank lists), the `break ... rank N` clause, and the ranks a breakpoint
/// set under a focus applies to.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger {

/// "0-3,6" for a set of ranks (STAT's rank lists).
std::string format_rank_list(std::vector<int> ranks);
/// Parses "3", "0-3,6", "all" into ranks; throws for a rank the job does not have.
std::vector<int> parse_rank_list(session& s, std::string_view text);

/// Takes a trailing "rank LIST" off a breakpoint spec (`break LOC rank 0,2-3`, as
/// TotalView's and DDT's per-process breakpoints): the ranks it is planted in (empty: every
/// rank, for `rank all` or a list naming every rank), or nullopt when the spec has no such
/// clause. Throws for a rank the job does not have, or outside an MPI session once a
/// program runs (before `run -- mpirun` the list is kept as typed).
std::optional<std::vector<int>> split_rank_clause(session& s, std::string& spec);

/// The ranks a breakpoint set now is planted in: the focused ranks when the focus is not
/// the whole job, else empty (every rank, including a session that is not an MPI job).
std::vector<int> breakpoint_ranks_of_focus(session& s);

}  // namespace ompdbg::debugger
