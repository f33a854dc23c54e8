#pragma once
/// What the MPI library's message-queue DLL reports, as the model hands it to the front ends
/// (`mpi queues`, `mpi deadlock`, `ompdbg triage`): plain data in the model's own types,
/// which libdebugger fills from the plugin host's wrapper of the DLL (plugins/msgq.hpp) and
/// from ompdbg's own reader of Open MPI's ob1 PML. The front ends see the DLL only through
/// these (issue 19).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ompdbg::debugger {

/// An operation's state (the DLL's mqs_status).
enum class queue_status { pending, matched, complete };

/// "pending", "matched", "complete".
std::string to_string(queue_status st);

/// Which queue an operation came from (the DLL's mqs_op_class).
enum class queue_kind { pending_sends, pending_receives, unexpected_messages };

/// One entry of a queue (the DLL's mqs_pending_operation).
struct queue_operation {
    queue_kind queue = queue_kind::pending_sends;
    queue_status status = queue_status::pending;
    std::int64_t desired_local_rank = -1;    ///< peer in the communicator, -1: MPI_ANY_SOURCE
    std::int64_t desired_global_rank = -1;   ///< the same in MPI_COMM_WORLD
    bool tag_wild = false;                   ///< MPI_ANY_TAG
    std::int64_t desired_tag = 0;
    std::int64_t desired_length = 0;         ///< bytes of the buffer
    bool system_buffer = false;
    std::uint64_t buffer = 0;
    /// Valid when status >= matched, or for sends.
    std::int64_t actual_local_rank = -1;
    std::int64_t actual_global_rank = -1;
    std::int64_t actual_tag = 0;
    std::int64_t actual_length = 0;
    std::vector<std::string> extra_text;     ///< the non-empty extra_text lines
    /// Element count and datatype name, when the request can be read through the MPI
    /// library's DWARF (Open MPI's mca_pml_base_request_t); the DLL reports bytes only.
    std::optional<std::uint64_t> count;
    std::string datatype;
};

/// The contents of one queue.
struct queue_contents {
    bool available = true;                   ///< false: the DLL has no information
    std::string unavailable_reason;          ///< e.g. "the DLL reports no information (mqs_no_information)"
    std::vector<queue_operation> operations;
    /// Empty when the DLL filled the queue; otherwise who did ("ompdbg's reader of Open
    /// MPI's ob1 PML", for the unexpected queue Open MPI's DLL has no information about).
    std::string reader;
};

/// ob1's counts of the messages between this process and one peer of a communicator.
struct queue_peer_sequence {
    std::int64_t peer_local = 0;    ///< the peer's rank in the communicator
    std::int64_t peer_global = -1;  ///< the same in MPI_COMM_WORLD (-1: unknown)
    std::uint32_t sent = 0;         ///< messages this process started sending to the peer
    std::uint16_t arrived = 0;      ///< the peer's messages that arrived here in order (matched or unexpected)
};

/// One communicator and its three queues.
struct queue_communicator {
    std::uint64_t unique_id = 0;
    std::string name;                        ///< as set with MPI_Comm_set_name (or the MPI's default)
    std::int64_t local_rank = 0;
    std::int64_t size = 0;
    std::vector<int> world_ranks;            ///< index: local rank; empty when the DLL cannot tell
    queue_contents sends, receives, unexpected;
    /// Open MPI ob1's message sequence numbers with each peer: the evidence of whether
    /// messages move, and of messages on their way (a peer sent more than this process has
    /// seen arrive). Empty with sequences_note saying why when they cannot be read.
    std::vector<queue_peer_sequence> sequences;
    bool sequences_read = false;
    std::string sequences_note;
};

}  // namespace ompdbg::debugger
