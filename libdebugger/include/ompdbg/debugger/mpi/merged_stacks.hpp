#pragma once
/// The merged stacks of an MPI job (`mpi stacks`, as STAT shows them).

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/debugger/stack/stack_tree.hpp"

namespace ompdbg::debugger {

/// Every thread of every live focused rank, its stack's function names outermost first
/// (from main, or clone3 for other threads), merged into one tree; a thread whose stack
/// cannot be read is left out (logged). The current inferior is kept.
stack_tree merged_rank_stacks(session& s);

}  // namespace ompdbg::debugger
