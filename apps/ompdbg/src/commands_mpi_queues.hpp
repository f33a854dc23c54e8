#pragma once
/// MPI message queues (issue 6): `mpi queues [RANK]` shows, per communicator, the pending
/// sends, pending receives and unexpected messages the MPI library's message-queue DLL
/// reports; `mpi deadlock [--dot FILE]` builds the wait-for graph of blocked point-to-point
/// operations of every rank (wait_for_graph.hpp) and reports cycles, waits on finished ranks
/// and starved ranks.

#include "command_table.hpp"

namespace ompdbg::app {

/// Adds `queues` and `deadlock` to the `mpi` prefix command.
void register_mpi_queue_commands(command_table& t);

}  // namespace ompdbg::app
