#pragma once
// Running a launched MPI starter (mpirun, mpi2dd-run) until its debugger interface says the
// job is there, shared by MPIR (run_to_spawn) and MPI2DD (run_to_start): both look for their
// interface whenever a library is loaded or the starter execs, and both stop at their own
// breakpoint with a state to read.

#include <functional>
#include <string_view>

#include "ompdbg/tracer/process.hpp"

namespace ompdbg::tracer::internal {

/// What the loop asks of the interface it waits for.
struct starter_interface_hooks {
    /// Looks for the interface and plants its breakpoint if not done yet (idempotent).
    std::function<void()> find;
    /// The starter exec'd: the interface found so far is gone.
    std::function<void()> forget;
    /// A breakpoint stop: true when the job is there, false to go on; throws for an abort.
    std::function<bool(const stop_reason&)> at_breakpoint;
};

/// Resumes `starter` until `hooks.at_breakpoint` says the job is there. Throws when the
/// starter exits or is killed first, or on Ctrl-C; `name` and the two forms of `goal`
/// ("spawning"/"spawn") make the messages ("mpirun exited ... before spawning the MPI job.").
void run_starter_until_job(process& starter, std::string_view name, std::string_view goal_ing,
                           std::string_view goal, const starter_interface_hooks& hooks);

}  // namespace ompdbg::tracer::internal
