// The wait-for graph of `mpi deadlock` on hand-built graphs: cycles found once each and
// described as the issue shows them, pending requests of running ranks ignored, waits on
// finished ranks and starved ranks reported, Graphviz output.

#include <catch2/catch.hpp>

#include "ompdbg/debugger/mpi/wait_for_graph.hpp"

using ompdbg::debugger::rank_activity;
using ompdbg::debugger::wait_for_graph;

TEST_CASE("wait_for_graph: a receive-first ring is one cycle from its smallest rank", "[cli][msgq]") {
    wait_for_graph g;
    for (int r = 0; r < 4; ++r) {
        g.add_rank(r, rank_activity::blocked_p2p, "MPI_Recv");
        g.add_wait(r, (r + 3) % 4, "MPI_Recv(tag 7)");  // each receives from its left
    }
    auto rep = g.analyze();
    REQUIRE(rep.cycles.size() == 1);
    CHECK(rep.cycles[0].ranks == std::vector<int>{0, 3, 2, 1});
    CHECK(rep.cycles[0].describe() == "0 -> 3 -> 2 -> 1 -> 0, each blocked in MPI_Recv(tag 7)");
    CHECK(rep.starved.empty());
    CHECK(rep.waits_on_finished.empty());
    CHECK(!rep.cycles_truncated);
}

TEST_CASE("wait_for_graph: different operations on a cycle are named per rank", "[cli][msgq]") {
    wait_for_graph g;
    g.add_rank(0, rank_activity::blocked_p2p, "MPI_Send");
    g.add_rank(1, rank_activity::blocked_p2p, "MPI_Send");
    g.add_wait(0, 1, "MPI_Send(tag 1)");
    g.add_wait(1, 0, "MPI_Send(tag 2)");
    auto rep = g.analyze();
    REQUIRE(rep.cycles.size() == 1);
    CHECK(rep.cycles[0].describe() == "0 -> 1 -> 0: 0 in MPI_Send(tag 1), 1 in MPI_Send(tag 2)");
}

TEST_CASE("wait_for_graph: every elementary cycle once, a rank waiting into a cycle looks starved", "[cli][msgq]") {
    wait_for_graph g;
    for (int r = 0; r < 5; ++r) {
        g.add_rank(r, rank_activity::blocked_p2p, "MPI_Waitall");
    }
    // Two cycles sharing rank 0 (0<->1, 0->2->3->0) and rank 4 waiting for rank 3.
    g.add_wait(0, 1, "MPI_Waitall(receive tag 1)");
    g.add_wait(1, 0, "MPI_Waitall(receive tag 1)");
    g.add_wait(0, 2, "MPI_Waitall(receive tag 2)");
    g.add_wait(2, 3, "MPI_Waitall(receive tag 2)");
    g.add_wait(3, 0, "MPI_Waitall(receive tag 2)");
    g.add_wait(4, 3, "MPI_Waitall(receive tag 9)");
    auto rep = g.analyze();
    REQUIRE(rep.cycles.size() == 2);
    CHECK(rep.cycles[0].ranks == std::vector<int>{0, 1});
    CHECK(rep.cycles[1].ranks == std::vector<int>{0, 2, 3});
    REQUIRE(rep.starved.size() == 1);
    CHECK(rep.starved[0].rank == 4);
    CHECK(rep.starved[0].why == "waits in MPI_Waitall(receive tag 9) for rank 3, which is blocked in MPI_Waitall");
    auto capped = g.analyze(1);
    CHECK(capped.cycles.size() == 1);
    CHECK(capped.cycles_truncated);
}

TEST_CASE("wait_for_graph: pending requests of ranks that are not blocked are no deadlock", "[cli][msgq]") {
    // mpi_pending_barrier: every rank has Irecvs from both neighbours pending, but they sit
    // in MPI_Barrier (or compute): nothing waits point-to-point.
    wait_for_graph g;
    g.add_rank(0, rank_activity::running);
    for (int r = 1; r < 4; ++r) {
        g.add_rank(r, rank_activity::blocked_collective, "MPI_Barrier");
    }
    for (int r = 0; r < 4; ++r) {
        g.add_wait(r, (r + 3) % 4, "MPI_Barrier(receive tag 21)");
        g.add_wait(r, (r + 1) % 4, "MPI_Barrier(receive tag 22)");
    }
    auto rep = g.analyze();
    CHECK(rep.empty());
}

TEST_CASE("wait_for_graph: waits on finished ranks and on ranks in a collective", "[cli][msgq]") {
    wait_for_graph g;
    g.add_rank(0, rank_activity::blocked_collective, "MPI_Barrier");
    g.add_rank(1, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_rank(2, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_rank(3, rank_activity::finished, "", "exited with code 0");
    g.add_rank(4, rank_activity::running);
    g.add_rank(5, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_wait(1, 0, "MPI_Recv(tag 8)");   // tag mismatch: 0 already sent tag 7
    g.add_wait(2, 3, "MPI_Recv(tag 5)");
    g.add_wait(5, 4, "MPI_Recv(tag 6)");   // 4 may still send: not starved
    auto rep = g.analyze();
    CHECK(rep.cycles.empty());
    REQUIRE(rep.waits_on_finished.size() == 1);
    CHECK(rep.waits_on_finished[0].describe(g) ==
          "rank 2 waits in MPI_Recv(tag 5) for rank 3, which has finished (exited with code 0)");
    REQUIRE(rep.starved.size() == 1);
    CHECK(rep.starved[0].rank == 1);
    CHECK(rep.starved[0].why == "waits in MPI_Recv(tag 8) for rank 0, which is in MPI_Barrier");
}

TEST_CASE("wait_for_graph: any-source receives are starved only when no sender can act", "[cli][msgq]") {
    wait_for_graph g;
    g.add_rank(0, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_rank(1, rank_activity::blocked_collective, "MPI_Barrier");
    g.add_rank(2, rank_activity::finished);
    g.add_any_wait(0, {1, 2}, "MPI_Recv(any source, tag 3)");
    auto rep = g.analyze();
    REQUIRE(rep.starved.size() == 1);
    CHECK(rep.starved[0].rank == 0);
    g.add_rank(2, rank_activity::running);
    CHECK(g.analyze().starved.empty());
}

TEST_CASE("wait_for_graph: Graphviz output marks the cycle", "[cli][msgq]") {
    wait_for_graph g;
    g.add_rank(0, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_rank(1, rank_activity::blocked_p2p, "MPI_Recv");
    g.add_rank(2, rank_activity::finished);
    g.add_wait(0, 1, "MPI_Recv(tag 7)");
    g.add_wait(1, 0, "MPI_Recv(tag 7)");
    auto dot = g.to_dot();
    CHECK(dot.rfind("digraph wait_for {", 0) == 0);
    CHECK(dot.find("r0 [label=\"rank 0\\nMPI_Recv\", color=red];") != std::string::npos);
    CHECK(dot.find("r0 -> r1 [label=\"MPI_Recv(tag 7)\", color=red];") != std::string::npos);
    CHECK(dot.find("r2 [label=\"rank 2\\nfinished\", style=filled, fillcolor=lightgrey];") != std::string::npos);
    CHECK(dot.back() == '\n');
}
