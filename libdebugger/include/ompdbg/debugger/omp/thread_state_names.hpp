#pragma once
/// Short names of OpenMP thread states, for front ends that name a thread by its state in
/// few words (the DAP server's "OMP 2 · barrier wait").

#include <string>
#include <string_view>

namespace ompdbg::debugger {

/// A short name for an OMPD thread state (omp_thread_row::state):
/// ompt_state_wait_barrier_implicit → "barrier wait", ompt_state_work_parallel → "working";
/// a state it does not know by its words ("wait_foo" → "wait foo").
std::string omp_state_short_name(std::string_view ompd_state);

}  // namespace ompdbg::debugger
