// The edge rules of the wait-for graph (wait_edges.hpp, issue 17) on hand-built queues of a
// ring of MPI_Sendrecv: a send the peer's posted receive matches, eager data already in the
// peer's unexpected queue, and a receive whose message is on its way (ob1's sequence
// numbers) are no waits; a receive-first ring of MPI_Recv and a rendezvous exchange nobody
// can take stay cycles.

#include <catch2/catch.hpp>

#include "ompdbg/debugger/mpi/wait_edges.hpp"

using ompdbg::debugger::add_wait_edges;
using ompdbg::debugger::rank_activity;
using ompdbg::debugger::rank_queue_state;
using ompdbg::debugger::wait_for_graph;
using ompdbg::debugger::queue_operation;
using ompdbg::debugger::queue_peer_sequence;
using ompdbg::debugger::queue_status;

namespace {

constexpr int ranks = 4;

/// A rank of a 4-rank MPI_COMM_WORLD blocked in `call`, with ob1's sequence numbers read.
rank_queue_state rank_in(int rank, const std::string& call) {
    rank_queue_state st;
    st.rank = rank;
    st.call = call;
    st.activity = rank_activity::blocked_p2p;
    st.queues_read = true;
    st.communicators.resize(1);
    auto& c = st.communicators[0];
    c.unique_id = 0;
    c.name = "MPI_COMM_WORLD";
    c.size = ranks;
    c.local_rank = rank;
    c.world_ranks = {0, 1, 2, 3};
    c.sequences_read = true;
    return st;
}

queue_operation op(int peer, int tag, queue_status status = queue_status::pending) {
    queue_operation o;
    o.desired_local_rank = o.desired_global_rank = peer;
    o.desired_tag = tag;
    o.status = status;
    return o;
}

void sequences(rank_queue_state& st, int peer, std::uint32_t sent, std::uint16_t arrived) {
    st.communicators[0].sequences.push_back(queue_peer_sequence{peer, peer, sent, arrived});
}

wait_for_graph::report analyze(const std::vector<rank_queue_state>& states,
                               std::vector<ompdbg::debugger::cleared_wait>* cleared = nullptr) {
    wait_for_graph g;
    for (const auto& st : states) {
        g.add_rank(st.rank, st.activity, st.call);
    }
    auto c = add_wait_edges(g, states);
    if (cleared != nullptr) {
        *cleared = c;
    }
    return g.analyze();
}

}  // namespace

TEST_CASE("wait edges: a rendezvous MPI_Sendrecv ring whose peers posted their receives has no cycle",
          "[cli][msgq]") {
    // Each rank sends to its right (tag 1, not yet taken) and receives from its left, whose
    // send has started: the old rules saw two cycles here.
    std::vector<rank_queue_state> states;
    for (int r = 0; r < ranks; ++r) {
        auto st = rank_in(r, "MPI_Sendrecv");
        st.communicators[0].sends.operations.push_back(op((r + 1) % ranks, 1));
        st.communicators[0].receives.operations.push_back(op((r + ranks - 1) % ranks, 1));
        states.push_back(st);
    }
    std::vector<ompdbg::debugger::cleared_wait> cleared;
    auto rep = analyze(states, &cleared);
    CHECK(rep.cycles.empty());
    CHECK(rep.starved.empty());
    REQUIRE(cleared.size() == 8);
    CHECK(cleared[0].describe() == "rank 0 in MPI_Sendrecv(send tag 1) with rank 1: rank 1's posted receive matches it");
    CHECK(cleared[1].describe() ==
          "rank 0 in MPI_Sendrecv(receive tag 1) with rank 3: rank 3 has started the message (its pending send, tag 1)");
}

TEST_CASE("wait edges: a receive whose message is on its way (more sent than arrived) is no wait", "[cli][msgq]") {
    // Eager sends done: each rank waits for its left neighbour's message, which ob1's
    // sequence numbers show sent (5) but not arrived (4).
    std::vector<rank_queue_state> states;
    for (int r = 0; r < ranks; ++r) {
        auto st = rank_in(r, "MPI_Sendrecv");
        st.communicators[0].receives.operations.push_back(op((r + ranks - 1) % ranks, 1));
        sequences(st, (r + 1) % ranks, 5, 4);          // sent to the right
        sequences(st, (r + ranks - 1) % ranks, 4, 4);  // arrived from the left
        states.push_back(st);
    }
    std::vector<ompdbg::debugger::cleared_wait> cleared;
    auto rep = analyze(states, &cleared);
    CHECK(rep.cycles.empty());
    REQUIRE(cleared.size() == 4);
    CHECK(cleared[0].why == "rank 3 sent it 1 more message than have arrived (ob1's sequence numbers)");
}

TEST_CASE("wait edges: eager data in the peer's unexpected queue frees the send, and a rendezvous header does not",
          "[cli][msgq]") {
    auto a = rank_in(0, "MPI_Send");
    auto b = rank_in(1, "MPI_Send");
    a.communicators[0].sends.operations.push_back(op(1, 1));
    b.communicators[0].sends.operations.push_back(op(0, 2));
    auto unexpected = [](int from, int tag, std::uint64_t data) {
        queue_operation u = op(from, tag);
        u.actual_global_rank = u.actual_local_rank = from;
        u.actual_tag = tag;
        u.buffer = data;
        return u;
    };
    SECTION("both rendezvous: the send-send deadlock stays a cycle") {
        b.communicators[0].unexpected.operations.push_back(unexpected(0, 1, 0));
        a.communicators[0].unexpected.operations.push_back(unexpected(1, 2, 0));
        auto rep = analyze({a, b});
        REQUIRE(rep.cycles.size() == 1);
        CHECK(rep.cycles[0].describe() == "0 -> 1 -> 0: 0 in MPI_Send(tag 1), 1 in MPI_Send(tag 2)");
    }
    SECTION("rank 0's data is at rank 1: only rank 1 waits") {
        b.communicators[0].unexpected.operations.push_back(unexpected(0, 1, 0x1000));
        a.communicators[0].unexpected.operations.push_back(unexpected(1, 2, 0));
        std::vector<ompdbg::debugger::cleared_wait> cleared;
        auto rep = analyze({a, b}, &cleared);
        CHECK(rep.cycles.empty());
        REQUIRE(cleared.size() == 1);
        CHECK(cleared[0].why == "its data is in rank 1's unexpected queue (an eager message)");
    }
}

TEST_CASE("wait edges: a receive-first MPI_Recv ring with nothing sent stays one cycle", "[cli][msgq]") {
    std::vector<rank_queue_state> states;
    for (int r = 0; r < ranks; ++r) {
        auto st = rank_in(r, "MPI_Recv");
        st.communicators[0].receives.operations.push_back(op((r + ranks - 1) % ranks, 7));
        sequences(st, (r + ranks - 1) % ranks, 0, 0);
        states.push_back(st);
    }
    std::vector<ompdbg::debugger::cleared_wait> cleared;
    auto rep = analyze(states, &cleared);
    REQUIRE(rep.cycles.size() == 1);
    CHECK(rep.cycles[0].describe() == "0 -> 3 -> 2 -> 1 -> 0, each blocked in MPI_Recv(tag 7)");
    CHECK(cleared.empty());
}
