#pragma once
/// STAT's merged prefix tree of stacks, shared by `mpi stacks` and `ompdbg triage`: every
/// thread's frames, outermost first, are one path from the root; a node knows the ranks and
/// threads whose stacks pass through it and the labels of the threads that end there.

#include <sys/types.h>

#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ompdbg::app {

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

    /// How a node is tagged in the text: its ranks ("[rank 0-3]"), its threads ("[3
    /// threads]"), or both ("[rank 0-3, 12 threads]").
    enum class tag { ranks, threads, ranks_and_threads };

    /// The tree as indented text lines (`|- name [tag]`, `` `- `` for a last child), with
    /// each label as `=> 2 threads (1,4): LABEL` (by thread number) or `=> 2 threads in rank
    /// 0-1: LABEL` (with ranks).
    std::vector<std::string> lines(tag t) const;

    /// The tree as JSON: {name, ranks, threads, labels: [{label, threads: [{rank, thread}]}],
    /// children} (docs/json.md, `ompdbg triage --json`).
    nlohmann::json to_json(const std::string& root_name) const;

    /// The tree's nodes and edges as Graphviz statements (no `digraph` around them): each
    /// node labelled with its name and `who(node)`, each edge with `edge(child)`.
    void write_dot(std::ostream& out, const std::string& root_name, const std::function<std::string(const node&)>& who,
                   const std::function<std::string(const node&)>& edge) const;

private:
    node root_;
};

}  // namespace ompdbg::app
