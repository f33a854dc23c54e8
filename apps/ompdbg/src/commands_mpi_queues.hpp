#pragma once
/// MPI message queues (issue 6): `mpi queues [RANKS]` shows, per communicator, the pending
/// sends, pending receives and unexpected messages the MPI library's message-queue DLL
/// reports; `mpi deadlock [--dot FILE]` shows the wait-for graph of blocked point-to-point
/// operations of every rank and its cycles, waits on finished ranks and starved ranks.
/// Both render what the model's gather_job_queues() collects
/// (ompdbg/debugger/mpi/message_queues.hpp).

#include "command_table.hpp"

namespace ompdbg::app {

/// Adds `queues` and `deadlock` to the `mpi` prefix command.
void register_mpi_queue_commands(command_table& t);

}  // namespace ompdbg::app
