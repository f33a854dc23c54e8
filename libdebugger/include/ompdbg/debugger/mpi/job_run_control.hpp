#pragma once
/// Run control of an MPI job (issue 19: moved from the CLI's mpi_step.cpp): the step
/// commands of every focused rank run at the same time, so a step over a collective
/// (MPI_Barrier) completes instead of waiting for ranks that are not running. Each rank's
/// step is the single-process one (run/stepping.hpp, through the front end's command) run
/// as a fiber (stack/fiber.hpp) of the tracer thread; where it would wait for its process
/// (resume_and_wait) it yields, and one loop waits for every rank, the starter and the
/// MPI2DD helpers together and resumes the rank whose process stopped. The observer hears
/// of each rank's turn (rank_turn, rank_turn_ended), so a front end labels its output.
/// `continue` of a job (continue_job) runs the same processes as one group until a stop.

#include <functional>
#include <vector>

#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/run/stop_reporter.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/process_group.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// Runs `step` (a step command of the front end) in every alive focused rank together,
/// each rank current while its step runs; returns false when it failed in some rank (the
/// observer heard rank_error). The starter runs meanwhile; every process of the job is
/// stopped again on return. interrupt_running_process() interrupts every rank's step.
/// Throws "No rank of the focus is running." when there is none.
bool step_ranks_together(session& s, const std::function<void()>& step);

/// True while a rank's step runs as a fiber of step_ranks_together: resume_and_wait then
/// waits with the whole job (wait_in_rank_step) and reports no early breakpoint hit.
bool in_rank_step();

/// In a rank's step: `proc` was resumed; yields until the job's loop delivers its next
/// stop and returns it.
tracer::stop_reason wait_in_rank_step(tracer::process& proc);

/// `continue` of the job: reports (report.breakpoint_hit) the hits of focused ranks kept
/// from an earlier stop first; otherwise resumes every focused rank, the starter and the
/// MPI2DD helpers together, handles rank ends, starter and MPI2DD events, waits for the
/// first stop a user must see, stops every other process and shows it (report.stop, the
/// observer's rank_stop naming the rank). A stop report.stop declines resumes the job.
/// Throws "No rank of the focus is running." when nothing can run.
void continue_job(session& s, stop_reporter& report);

/// Plants every breakpoint in the current rank again (ranks of one job may map their
/// libraries at different addresses); a failure is reported (observer's job_error,
/// "[rank N] ...").
void sync_current_rank(session& s);

/// Events that processes of the job produced while stop_all stopped them, or that arrive
/// for a process nobody waits for: ends are reported, breakpoint hits kept for the next
/// `continue` (inferior::pending_hits), MPI2DD events acted on, thread and library events
/// consumed.
void absorb_kept_events(session& s, mpi_job* job, const std::vector<tracer::process_group::event>& kept);

/// After MPI_Abort stopped an MPI2DD job: tells the observer (job_aborted) with the
/// abort's message and how many ranks are stopped.
void report_job_abort(session& s, mpi_job& job);

}  // namespace ompdbg::debugger
