#pragma once
/// The wait-for edges of an MPI job's blocked ranks, from every rank's message queues at once
/// (issue 17): a blocked rank waits for a peer only when that peer must still act. A pending
/// send whose peer has posted a receive that matches it, or whose eager data already sits in
/// the peer's unexpected queue, or that the peer has matched already (ob1's sequence numbers:
/// every message sent arrived, none waits unexpected), can complete (the send half of an
/// MPI_Sendrecv in a halo exchange); a pending receive whose message the peer has already started (its pending
/// send, a message in the receiver's unexpected queue, or more messages sent than arrived by
/// ob1's sequence numbers) waits for the progress engines, not for the peer. Those are no
/// edges; what was left out is returned so that reports can say why.

#include <string>
#include <vector>

#include "ompdbg/debugger/mpi/message_queues.hpp"
#include "ompdbg/debugger/mpi/wait_for_graph.hpp"

namespace ompdbg::debugger {

/// Adds the wait-for edges of every rank of `ranks` blocked in a point-to-point call to `g`
/// (their ranks must already be in `g`); returns the operations that are no waits.
std::vector<cleared_wait> add_wait_edges(wait_for_graph& g, const std::vector<rank_queue_state>& ranks);

}  // namespace ompdbg::debugger
