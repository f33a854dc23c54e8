#pragma once
/// step/next/finish (and until, advance, stepi, nexti) across a multi-rank focus: every
/// focused rank runs its own step at the same time (the model's step_ranks_together,
/// ompdbg/debugger/mpi/job_run_control.hpp), each rank's step the CLI's command run as a
/// fiber; the observer's rank_turn events label each rank's output "[rank N]".

#include <functional>
#include <string>

#include "ompdbg/debugger/mpi/job_run_control.hpp"

namespace ompdbg::app {

class session;

/// Whether command `name` (resolved top-level name) steps: such commands run on every
/// focused rank together.
bool is_step_command(const std::string& name);

/// Runs `handler` (a step command) in every alive focused rank together; returns false when
/// it failed in some rank (errors printed, labelled). The starter runs meanwhile; every
/// process of the job is stopped again on return. Ctrl-C interrupts every rank's step.
/// Throws "No rank of the focus is running." when there is none.
bool step_focus_together(session& s, const std::function<void()>& handler);

/// True while a rank's step runs as a fiber of step_focus_together.
using debugger::in_rank_step;

}  // namespace ompdbg::app
