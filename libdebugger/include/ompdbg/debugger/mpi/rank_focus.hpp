#pragma once
/// The focus of an MPI session (`rank 0-3,6`): the inferiors that commands apply to.

#include <functional>

#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger {

/// Runs `fn` with each focused rank current in turn (alive or not: `fn` checks), in the
/// focus's order as it was on entry, and makes the inferior that was current current again
/// afterwards, also when `fn` throws.
void for_each_focused_rank(session& s, const std::function<void(inferior&)>& fn);

}  // namespace ompdbg::debugger
