#pragma once
/// The CLI's forms of the model's merged stack tree (ompdbg/debugger/stack/stack_tree.hpp),
/// shared by `mpi stacks` and `ompdbg triage`: indented text, JSON and Graphviz.

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ompdbg/debugger/stack/stack_tree.hpp"

namespace ompdbg::app {

using debugger::stack_tree;

/// How a node is tagged in the text: its ranks ("[rank 0-3]"), its threads ("[3
/// threads]"), or both ("[rank 0-3, 12 threads]").
enum class stack_tree_tag { ranks, threads, ranks_and_threads };

/// The tree as indented text lines (`|- name [tag]`, `` `- `` for a last child), with each
/// label as `=> 2 threads (1,4): LABEL` (by thread number) or `=> 2 threads in rank 0-1:
/// LABEL` (with ranks).
std::vector<std::string> stack_tree_lines(const stack_tree& tree, stack_tree_tag t);

/// The tree as JSON: {name, ranks, threads, labels: [{label, threads: [{rank, thread}]}],
/// children} (docs/json.md, `ompdbg triage --json`).
nlohmann::json stack_tree_json(const stack_tree& tree, const std::string& root_name);

/// The tree's nodes and edges as Graphviz statements (no `digraph` around them): each node
/// labelled with its name and `who(node)`, each edge with `edge(child)`.
void write_stack_tree_dot(const stack_tree& tree, std::ostream& out, const std::string& root_name,
                          const std::function<std::string(const stack_tree::node&)>& who,
                          const std::function<std::string(const stack_tree::node&)>& edge);

}  // namespace ompdbg::app
