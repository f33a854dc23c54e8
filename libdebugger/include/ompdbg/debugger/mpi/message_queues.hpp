#pragma once
/// MPI message queues (issue 6): per communicator of each rank, the pending sends, pending
/// receives and unexpected messages the MPI library's message-queue DLL reports, and the
/// wait-for graph of blocked point-to-point operations of every rank (wait_for_graph.hpp)
/// with its cycles, waits on finished ranks and starved ranks.
///
/// `mpi queues`, `mpi deadlock` and `ompdbg triage` render what gather_job_queues()
/// collects. It never prints.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/mpi/queue_data.hpp"
#include "ompdbg/debugger/mpi/wait_for_graph.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger {

/// One rank as gather_job_queues() found it.
struct rank_queue_state {
    int rank = 0;
    pid_t pid = 0;
    /// The rank's process exited or was killed (then nothing else but end_note is set).
    bool ended = false;
    std::string end_note;               ///< "exited with code 0", "killed by signal SIGKILL"
    /// The outermost MPI function on the main thread's stack ("MPI_Recv"; PMPI_X counts as
    /// MPI_X), empty when the rank is not inside MPI.
    std::string call;
    rank_activity activity = rank_activity::running;
    /// True when `communicators` holds what the message-queue DLL reported.
    bool queues_read = false;
    std::vector<queue_communicator> communicators;
    /// Why the queues of a live rank could not be read (the DLL's or the host's one-line
    /// message: no DLL, types missing from a stripped MPI library...); empty otherwise.
    std::string queue_error;
};

/// The message queues of a set of ranks and the deadlock verdict drawn from them.
struct job_queue_report {
    std::vector<rank_queue_state> ranks;   ///< in rank order
    /// MPI_COMM_WORLD's size as the DLL reports it (0: unknown). Larger than ranks.size()
    /// when only part of the job was gathered (focus, or a session attached to one rank).
    std::int64_t world_size = 0;
    /// The wait-for graph of the gathered ranks (its to_dot() is `mpi deadlock --dot`).
    wait_for_graph graph;
    /// graph.analyze(): cycles, waits on finished ranks, starved ranks.
    wait_for_graph::report verdict;
    /// Pending operations of blocked ranks that are no wait (wait_edges.hpp), with why.
    std::vector<cleared_wait> cleared;
};

struct queue_gather_options {
    /// The ranks to gather; nullopt: the focus (every focused rank of an MPI session, or the
    /// session's single process when it is a rank attached by pid).
    std::optional<std::vector<int>> ranks;
    /// Report a failure to read the queues of every live rank (`mpi queues`); false: only of
    /// the ranks blocked in point-to-point calls (`mpi deadlock`). Every live rank's queues
    /// are read either way: a blocked rank's waits depend on its peers' queues.
    bool all_queues = true;
};

/// Reads the stack and message queues of each rank of `opts.ranks` (all stopped, as the
/// session keeps them between commands) and builds the wait-for graph. The message-queue
/// DLL is loaded once per session under the session's plugin policy and each rank's DLL
/// state is kept across calls. Per-rank failures land in rank_queue_state::queue_error.
/// Throws ompdbg::error when there is no process ("The program is not being run."), a
/// requested rank is not in the session, or the session's single process is not an MPI
/// rank. Never prints.
job_queue_report gather_job_queues(session& s, const queue_gather_options& opts = {});

}  // namespace ompdbg::debugger
