#pragma once
/// MPI jobs acquired through the MPI-2 debugger interface (issue 7, MPI2DD): `run --
/// STARTER` and `attach STARTER_PID` when the starter defines MPI2DD_info (preferred over
/// MPIR when it has both). The starter, and in a hierarchical job every directory and
/// metadirectory process, stays traced with an internal breakpoint on MPI2DD_breakpoint;
/// each event it raises (SPAWN, CONNECT, ACCEPT, JOIN, DIRECTORY_CHANGED,
/// METADIRECTORY_CHANGED, ABORT) is handled while the job runs: new processes of the tables
/// become ranks of the session (inferiors), an abort stops every rank. A process named by a
/// table is attached only when it descends from the starter or runs the executable the
/// table names. What happens is told to the session's observer (job_acquired,
/// job_tables_changed, job_warning, ...).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ompdbg/debugger/mpi/job_acquisition.hpp"
#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::debugger {

/// Whether `program` is run as an MPI2DD starter: it or a library it names defines
/// MPI2DD_info and MPI2DD_breakpoint, and the mpi_flags initialised in the file either
/// have MPI2DD_MPIFLAG_I_AM_STARTER or are still zero (filled at run time). The files are
/// opened through `elves` when given (the session's, which `run` reads them from next).
bool is_mpi2dd_starter(const std::filesystem::path& program, const tracer::elf_provider& elves = {});
/// `run` of an MPI2DD starter: launches it, runs it to MPI2DD_DEBUG_START, acquires every
/// process of its tables (following directories), opens their gates, plants the
/// breakpoints in every rank; the job is stopped there (the next continue releases it).
void start_mpi2dd_job(session& s, const std::filesystem::path& starter, const std::vector<std::string>& args,
                      const job_options& opts);
/// `attach PID` / `mpi attach PID`: when `proc` defines a valid MPI2DD_info of a starter,
/// acquires its job, takes `proc` and returns true. Returns false (proc untouched) when it
/// has no MPI2DD_info. Throws for a malformed interface or a job without processes.
bool attach_mpi2dd_job(session& s, std::unique_ptr<tracer::process>& proc, const job_options& opts);

/// What mpi2dd_job_event did with an event of the job's group.
enum class mpi2dd_outcome {
    not_mine,   ///< neither an MPI2DD event nor a directory process: the caller handles it
    handled,    ///< acted on (and the process resumed when a group was given)
    abort,      ///< MPI2DD_DEBUG_ABORT: the caller stops every process and returns to the user
};
/// An event of the starter or of a directory process while the job runs. `group` (may be
/// null for events kept by stop_all: then nothing is resumed): new ranks are attached,
/// added to the session (and to the group when the focus is the whole job) and released;
/// the observer hears of them (job_tables_changed). An abort keeps its message in
/// `job.mpi2dd->abort_message`.
mpi2dd_outcome mpi2dd_job_event(session& s, mpi_job& job, tracer::process_group* group,
                                const tracer::process_group::event& e);

}  // namespace ompdbg::debugger
