#pragma once
/// Acquiring an MPI job through the starter's MPIR interface (issue 6) and ending it:
/// `run -- mpirun ...` launches the starter and runs it to MPIR_Breakpoint, `attach
/// MPIRUN_PID` / `mpi attach PID` attach a running one; either way every rank of
/// MPIR_proctable is attached (on this host with ptrace, on others through one agent per
/// host: remote_ranks.hpp) and becomes an inferior of the session, the breakpoints planted
/// in each. What happens is told to the session's observer (job_acquired, job_error, ...).
/// MPI2DD starters: mpi2dd_acquisition.hpp.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::debugger {

/// What acquiring a job needs of the front end.
struct job_options {
    /// The environment of a launched starter, which hands it to the ranks it starts on this
    /// host (the front end's OpenMP and breakpoint-agent variables).
    std::vector<std::string> env;
    /// The job's stdout goes to our stderr (a front end whose stdout carries its protocol).
    bool output_to_stderr = false;
    /// Plants the session's breakpoints in the current rank (mpi_job::plant_breakpoints);
    /// unset: the model's refresh_breakpoints. A test may count the calls instead.
    std::function<void(session&)> plant_breakpoints;
};

/// True when `program` is an MPI starter that start_mpi_job launches (mpirun, mpiexec,
/// orterun, prterun, srun, also after resolving symlinks such as Debian's /usr/bin/mpirun
/// alternatives).
bool is_mpi_starter(const std::filesystem::path& program);

/// `run` of an MPI starter: launches it, runs it to MPIR_Breakpoint, attaches every rank
/// (held in MPI_Init), makes them the session's inferiors and plants the breakpoints in
/// each. The job stays stopped there: the front end's next continue releases it.
void start_mpi_job(session& s, const std::filesystem::path& starter, const std::vector<std::string>& args,
                   const job_options& opts);

/// `attach PID`: when the freshly attached `proc` is an MPI starter whose job is running
/// (MPIR interface, MPIR_proctable filled; a starter still starting its tasks is waited
/// for, up to `set mpi-spawn-timeout`), acquires every rank and returns true (`proc` is
/// taken). Otherwise returns false and leaves `proc` alone, unless `required` (`mpi
/// attach`): then throws "Process N (NAME) is not an MPI starter: ...".
bool attach_mpi_job(session& s, std::unique_ptr<tracer::process>& proc, bool required, const job_options& opts);

/// Makes `ranks` the session's inferiors (the first current, the focus all of them) and
/// `job` its job, counts a start, takes the program from the first rank's executable when
/// none is set, and plants the breakpoints in every live rank. Shared by MPIR and MPI2DD
/// acquisition; each tells the observer what it acquired.
void install_job(session& s, std::unique_ptr<mpi_job> job, std::vector<std::unique_ptr<inferior>> ranks);

/// Plants the breakpoints in the current rank through its job (a rank that has no live
/// process is skipped when `live_only`); a failure is the observer's job_error "[rank N] ...".
void plant_in_current_rank(session& s, mpi_job& job, bool live_only = true);

/// `detach` / `kill` of the session's job: every live rank, then the starter; then the
/// session's target ends. Tells the observer how many ranks it ended (job_ended); a rank
/// that cannot be ended is a job_error and the others go on.
void end_job(session& s, bool kill);

}  // namespace ompdbg::debugger
