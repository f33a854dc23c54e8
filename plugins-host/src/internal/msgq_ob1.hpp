#pragma once
// ompdbg's own reader of the unexpected messages Open MPI's ob1 PML holds. Open MPI 4.1's
// message-queue DLL answers mqs_no_information for the unexpected queue; ob1 keeps those
// messages per communicator and peer (mca_pml_ob1_comm_proc_t's unexpected_frags, and
// frags_cant_match for fragments that arrived out of sequence), whose layout is in
// mca_pml_ob1.so's DWARF. The same per-peer state holds ob1's message sequence numbers,
// the evidence of whether messages move between two looks at a job.

#include <cstdint>
#include <optional>
#include <vector>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::plugins::internal {

/// One message ob1 received that no receive has matched yet.
struct ob1_message {
    std::uint64_t context_id = 0;     ///< the communicator's c_contextid (the DLL's unique_id)
    std::int64_t source = -1;         ///< sender's rank in that communicator
    std::int64_t tag = 0;
    std::int64_t bytes = 0;           ///< the message's length (rendezvous: the announced length)
    std::uint64_t data = 0;           ///< where its eager bytes are (0 for rendezvous headers)
    bool out_of_sequence = false;     ///< from frags_cant_match (arrived before an earlier one)
};

/// ob1's sequence numbers for one peer of one communicator (mca_pml_ob1_comm_proc_t).
struct ob1_peer_sequence {
    std::uint64_t context_id = 0;
    std::int64_t peer = 0;            ///< the peer's rank in that communicator
    std::uint32_t sent = 0;           ///< send_sequence: messages started to the peer
    std::uint16_t arrived = 0;        ///< expected_sequence: 1 + the peer's messages that arrived in order
};

/// What read() finds: the unexpected messages and every peer's sequence numbers.
struct ob1_state {
    std::vector<ob1_message> unexpected;
    std::vector<ob1_peer_sequence> sequences;   ///< peers ob1 has no state for yet: 0 and 0
};

/// Reads ob1's unexpected messages of a stopped Open MPI process. The layout is learnt once
/// (from the first module whose DWARF has each type), the lists are walked on each read.
class ob1_unexpected_reader {
public:
    explicit ob1_unexpected_reader(tracer::target& tgt) : tgt_(tgt) {}

    /// Every unexpected message of every communicator, in each peer's arrival order, and
    /// every peer's sequence numbers. Throws ompdbg::error with one line saying why it cannot: ob1 is not the selected PML (or not
    /// loaded yet), or a type or field is missing from the debug information (named).
    ob1_state read();

private:
    struct layout;
    void learn();
    std::optional<std::uint64_t> read_u64(std::uint64_t addr) const;
    std::uint64_t read_uint(std::uint64_t addr, std::uint64_t size) const;
    void read_frag(std::uint64_t frag, std::uint64_t context, bool out_of_sequence,
                   std::vector<ob1_message>& out) const;

    tracer::target& tgt_;
    std::shared_ptr<const layout> layout_;
};

}  // namespace ompdbg::plugins::internal
