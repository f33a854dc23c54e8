#pragma once
/// step/next/finish (and until, advance, stepi, nexti) across a multi-rank focus: every
/// focused rank runs its own step at the same time, so a step over a collective
/// (MPI_Barrier) completes instead of waiting for ranks that are not running. The step
/// code of each rank is the single-process code (stepping.cpp) run as a fiber of the
/// tracer thread; where it would wait for its process (resume_and_wait) it yields, and one
/// loop waits for every rank and the starter together and resumes the rank whose process
/// stopped. Each rank's output is labelled "[rank N]".

#include <functional>
#include <string>
#include <string_view>

#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

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
bool in_rank_step();
/// In a rank's step: `proc` was resumed; yields until its next stop and returns it
/// (resume_and_wait's wait when in_rank_step()).
tracer::stop_reason wait_in_rank_step(tracer::process& proc);

}  // namespace ompdbg::app
