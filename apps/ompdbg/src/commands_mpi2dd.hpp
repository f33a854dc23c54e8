#pragma once
/// The MPI2DD views of an MPI job (issue 7): `mpi ranks` shows comm worlds and spawn
/// parents, `mpi directories` the interface processes, and an abort its message. The job,
/// its acquisition and its events are the model's (ompdbg/debugger/mpi/mpi2dd_acquisition.hpp).

#include "command_table.hpp"
#include "ompdbg/debugger/mpi/mpi2dd_acquisition.hpp"
#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::app {

class session;
using debugger::mpi_job;
using debugger::mpi2dd_job;
using debugger::inferior;

/// Registers `mpi directories`.
void register_mpi2dd_commands(command_table& t);

// Acquisition and table events: the model's (ompdbg/debugger/mpi/mpi2dd_acquisition.hpp).
using debugger::attach_mpi2dd_job;
using debugger::is_mpi2dd_starter;
using debugger::mpi2dd_job_event;
using debugger::mpi2dd_outcome;
using debugger::start_mpi2dd_job;

/// `mpi ranks` of an MPI2DD job (comm worlds, world ranks, spawn parents).
void print_mpi2dd_ranks(session& s, mpi_job& job);

}  // namespace ompdbg::app
