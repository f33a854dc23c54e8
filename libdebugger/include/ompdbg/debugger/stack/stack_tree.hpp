#pragma once
/// STAT's merged prefix tree of stacks, shared by `mpi stacks` and `ompdbg triage`: every
/// thread's frames, outermost first, are one path from the root; a node knows the ranks and
/// threads whose stacks pass through it and the labels of the threads that end there. The
/// front ends render it (the CLI's text, JSON and Graphviz forms: apps/ompdbg/src/stack_tree.*).

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ompdbg::debugger {

class stack_tree {
public:
    struct node {
        std::set<int> ranks;
        std::set<std::pair<int, pid_t>> threads;   ///< (rank, tid)
        std::map<std::string, node> children;     ///< by frame name: stable output
        /// label → (rank, thread number) of the threads whose stack ends at this node.
        std::map<std::string, std::set<std::pair<int, int>>> labels;
    };

    /// Adds thread `tid` of `rank` (-1: not an MPI rank) with its frames outermost first;
    /// a non-empty `label` is shown under the node where the stack ends, with `number`.
    void add(int rank, pid_t tid, const std::vector<std::string>& frames, const std::string& label = {},
             int number = 0);

    const node& root() const { return root_; }

private:
    node root_;
};

}  // namespace ompdbg::debugger
