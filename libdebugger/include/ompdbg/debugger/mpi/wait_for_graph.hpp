#pragma once
/// The wait-for graph of an MPI job's blocked point-to-point operations, and what it says:
/// every cycle (a deadlock), ranks waiting on ranks that have finished, and ranks that look
/// starved. Pure data in, pure data out: `mpi deadlock` fills it from the message queues
/// and stacks of every rank; tests fill it by hand.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ompdbg::debugger {

/// What a rank is doing, as far as deadlock analysis cares.
enum class rank_activity {
    running,             ///< not inside a blocking MPI call (computing, polling, or unknown)
    blocked_p2p,         ///< inside a blocking point-to-point call (MPI_Recv, MPI_Wait, ...)
    blocked_collective,  ///< inside a collective (MPI_Barrier, MPI_Allreduce, ...)
    finished,            ///< exited, or in MPI_Finalize
};

/// A pending operation of a blocked rank that is no wait: its peer need not act for it to
/// complete (wait_edges.hpp says when).
struct cleared_wait {
    int rank = 0, peer = 0;
    std::string what;   ///< "MPI_Sendrecv(send tag 1)"
    std::string why;    ///< "rank 2's posted receive matches it"
    /// "rank 1 in MPI_Sendrecv(send tag 1) with rank 2: rank 2's posted receive matches it"
    std::string describe() const;
};

class wait_for_graph {
public:
    /// Declares a rank; `call` is the MPI function it is in ("MPI_Recv"), `note` says how
    /// it finished ("exited with code 0").
    void add_rank(int rank, rank_activity activity, std::string call = {}, std::string note = {});
    /// `from` cannot go on until `to` acts; `what` is the operation ("MPI_Recv(tag 7)").
    /// Several waits between the same two ranks are kept as one edge with every `what`.
    void add_wait(int from, int to, std::string what);
    /// `from` waits for any one of `candidates` (a receive from MPI_ANY_SOURCE): it can only
    /// be starved, never part of a cycle.
    void add_any_wait(int from, std::vector<int> candidates, std::string what);

    struct cycle {
        std::vector<int> ranks;          ///< starting at the smallest rank, not repeated at the end
        std::vector<std::string> whats;  ///< whats[i]: why ranks[i] waits for ranks[i+1]
        /// "0 -> 3 -> 2 -> 1 -> 0, each blocked in MPI_Recv(tag 7)", or with each rank's
        /// operation when they differ.
        std::string describe() const;
    };
    struct finished_wait {
        int rank = 0, peer = 0;
        std::string what;
        std::string describe(const wait_for_graph& g) const;
    };
    struct starved_rank {
        int rank = 0;
        std::string why;  ///< "waits in MPI_Recv(tag 8) for rank 0, which is in MPI_Barrier"
    };
    struct report {
        std::vector<cycle> cycles;
        bool cycles_truncated = false;   ///< more than max_cycles exist
        std::vector<finished_wait> waits_on_finished;
        std::vector<starved_rank> starved;
        bool empty() const { return cycles.empty() && waits_on_finished.empty() && starved.empty(); }
    };

    /// Every elementary cycle (each once, up to `max_cycles`), waits on finished ranks,
    /// and blocked ranks outside any cycle whose every peer is blocked or finished.
    report analyze(std::size_t max_cycles = 100) const;

    /// Graphviz: one node per rank (its call; cycles in red, finished ranks grey), one edge
    /// per wait labelled with its operations, any-source waits dashed.
    std::string to_dot() const;

    std::size_t rank_count() const { return ranks_.size(); }
    std::size_t count(rank_activity a) const;

private:
    struct rank_info {
        rank_activity activity = rank_activity::running;
        std::string call, note;
    };
    struct any_wait {
        int from;
        std::vector<int> candidates;
        std::string what;
    };
    std::string state_of(int rank) const;
    std::map<int, rank_info> ranks_;
    std::map<int, std::map<int, std::vector<std::string>>> edges_;  // from → to → whats
    std::vector<any_wait> any_waits_;
};

}  // namespace ompdbg::debugger
