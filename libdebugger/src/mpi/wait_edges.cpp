// Edge rules of the wait-for graph. The ranks of a session are stopped one after another,
// so what the queues show is a consistent cut: a message a stopped rank has started is
// either still at its sender (a pending send), on its way (ob1's sequence numbers: more sent
// than arrived), or at the receiver (matched, or in its unexpected queue). A rank that waits
// for such a message, or whose send its peer can take, waits for the progress engines only.

#include "ompdbg/debugger/mpi/wait_edges.hpp"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace ompdbg::debugger {

namespace {

const rank_queue_state* rank_state(const std::vector<rank_queue_state>& ranks, std::int64_t rank) {
    for (const auto& r : ranks) {
        if (r.rank == rank && r.queues_read) {
            return &r;
        }
    }
    return nullptr;
}

const queue_communicator* same_communicator(const rank_queue_state& r, const queue_communicator& c) {
    for (const auto& other : r.communicators) {
        if (other.unique_id == c.unique_id && other.size == c.size) {
            return &other;
        }
    }
    return nullptr;
}

std::int64_t local_rank_of(const queue_communicator& c, std::int64_t world) {
    for (std::size_t i = 0; i < c.world_ranks.size(); ++i) {
        if (c.world_ranks[i] == world) {
            return static_cast<std::int64_t>(i);
        }
    }
    return -1;
}

/// The messages `sender` started to `receiver` on the communicator, and how many of them have
/// not arrived there yet, by ob1's sequence numbers of both; nullopt when either side's are
/// unknown.
struct message_flow {
    std::uint32_t sent = 0;
    std::uint16_t on_their_way = 0;
};
std::optional<message_flow> flow_between(const rank_queue_state& receiver, const queue_communicator& rc,
                                          const rank_queue_state& sender, const queue_communicator& sc) {
    if (!rc.sequences_read || !sc.sequences_read) {
        return std::nullopt;
    }
    std::int64_t sender_local = local_rank_of(rc, sender.rank), receiver_local = local_rank_of(sc, receiver.rank);
    if (sender_local < 0 || receiver_local < 0) {
        return std::nullopt;
    }
    std::uint32_t sent = 0;
    std::uint16_t arrived = 0;
    for (const auto& s : sc.sequences) {
        sent = s.peer_local == receiver_local ? s.sent : sent;
    }
    for (const auto& s : rc.sequences) {
        arrived = s.peer_local == sender_local ? s.arrived : arrived;
    }
    // The receiver counts in 16 bits: compare modulo 2^16.
    return message_flow{sent, static_cast<std::uint16_t>(static_cast<std::uint16_t>(sent) - arrived)};
}

std::string tag_text(const queue_operation& op) {
    return op.tag_wild ? "any tag" : fmt::format("tag {}", op.desired_tag);
}

/// Why receive `op` of `r` from `peer` is no wait ("" when it is one).
std::string receive_cleared(const rank_queue_state& r, const queue_communicator& c, const queue_operation& op,
                            const rank_queue_state* peer) {
    auto tag_fits = [&](std::int64_t tag) { return op.tag_wild || op.desired_tag == tag; };
    for (const auto& u : c.unexpected.operations) {
        if (u.actual_global_rank == op.desired_global_rank && u.actual_tag >= 0 && tag_fits(u.actual_tag)) {
            return fmt::format("rank {}'s message (tag {}) is in its unexpected queue", op.desired_global_rank,
                               u.actual_tag);
        }
    }
    const queue_communicator* pc = peer == nullptr ? nullptr : same_communicator(*peer, c);
    if (pc == nullptr) {
        return {};
    }
    for (const auto& s : pc->sends.operations) {
        if (s.status != queue_status::complete && s.desired_global_rank == r.rank && tag_fits(s.desired_tag)) {
            return fmt::format("rank {} has started the message (its pending send, tag {})", peer->rank, s.desired_tag);
        }
    }
    if (auto f = flow_between(r, c, *peer, *pc); f && f->on_their_way > 0) {
        return fmt::format("rank {} sent it {} more message{} than have arrived (ob1's sequence numbers)", peer->rank,
                           f->on_their_way, f->on_their_way == 1 ? "" : "s");
    }
    return {};
}

/// Why send `op` of `r` to `peer` is no wait ("" when it is one).
std::string send_cleared(const rank_queue_state& r, const queue_communicator& c, const queue_operation& op,
                         const rank_queue_state* peer) {
    const queue_communicator* pc = peer == nullptr ? nullptr : same_communicator(*peer, c);
    if (pc == nullptr) {
        return {};
    }
    for (const auto& rv : pc->receives.operations) {
        bool from_r = rv.status == queue_status::pending
                          ? rv.desired_local_rank < 0 || rv.desired_global_rank == r.rank
                          : rv.status == queue_status::matched && rv.actual_global_rank == r.rank;
        bool tag = rv.status == queue_status::matched ? rv.actual_tag == op.desired_tag
                                                     : rv.tag_wild || rv.desired_tag == op.desired_tag;
        if (from_r && tag) {
            return fmt::format("rank {}'s posted receive matches it", peer->rank);
        }
    }
    bool unexpected_there = false;
    for (const auto& u : pc->unexpected.operations) {
        if (u.actual_global_rank == r.rank && u.actual_tag == op.desired_tag) {
            if (u.buffer != 0) {
                return fmt::format("its data is in rank {}'s unexpected queue (an eager message)", peer->rank);
            }
            unexpected_there = true;
        }
    }
    // Every message r started to the peer has arrived there and none waits unexpected: the
    // peer has matched this one (a rendezvous whose data it took; r waits for the transfer's
    // end, which only the progress engines bring).
    if (auto f = flow_between(*peer, *pc, r, c);
        f && f->sent > 0 && f->on_their_way == 0 && !unexpected_there && pc->unexpected.available) {
        return fmt::format("rank {} has received it (ob1's sequence numbers: every message sent to it arrived, none "
                           "waits unmatched)",
                           peer->rank);
    }
    return {};
}

}  // namespace

std::vector<cleared_wait> add_wait_edges(wait_for_graph& g, const std::vector<rank_queue_state>& ranks) {
    std::vector<cleared_wait> cleared;
    for (const auto& r : ranks) {
        if (r.activity != rank_activity::blocked_p2p) {
            continue;
        }
        // A send call waits on its sends, a receive call on its receives, MPI_Sendrecv,
        // MPI_Wait and the like on both.
        const std::string& call = r.call;
        bool wants_recv = call != "MPI_Send" && call != "MPI_Ssend" && call != "MPI_Bsend" && call != "MPI_Rsend";
        bool wants_send = call != "MPI_Recv" && call != "MPI_Probe" && call != "MPI_Mprobe" && call != "MPI_Mrecv";
        bool plain = call == "MPI_Recv" || call == "MPI_Send" || call == "MPI_Ssend" || call == "MPI_Bsend" ||
                     call == "MPI_Rsend";
        for (const auto& c : r.communicators) {
            auto add = [&](const queue_contents& q, bool is_send) {
                for (const auto& op : q.operations) {
                    if (op.status != queue_status::pending) {
                        continue;
                    }
                    std::string tag = tag_text(op);
                    std::string what = plain ? fmt::format("{}({})", call, tag)
                                             : fmt::format("{}({} {})", call, is_send ? "send" : "receive", tag);
                    if (!is_send && op.desired_local_rank < 0) {
                        std::vector<int> candidates;
                        for (int w : c.world_ranks) {
                            if (w != r.rank) {
                                candidates.push_back(w);
                            }
                        }
                        g.add_any_wait(r.rank, candidates,
                                       plain ? fmt::format("{}(any source, {})", call, tag) : what);
                        continue;
                    }
                    const rank_queue_state* peer = rank_state(ranks, op.desired_global_rank);
                    std::string why = is_send ? send_cleared(r, c, op, peer) : receive_cleared(r, c, op, peer);
                    int to = static_cast<int>(op.desired_global_rank);
                    if (why.empty()) {
                        g.add_wait(r.rank, to, what);
                    } else {
                        cleared.push_back(cleared_wait{r.rank, to, what, why});
                    }
                }
            };
            if (wants_send) {
                add(c.sends, true);
            }
            if (wants_recv) {
                add(c.receives, false);
            }
        }
    }
    return cleared;
}

}  // namespace ompdbg::debugger
