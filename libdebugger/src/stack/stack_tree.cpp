// The merged prefix tree of stacks (STAT).

#include "ompdbg/debugger/stack/stack_tree.hpp"

namespace ompdbg::debugger {

void stack_tree::add(int rank, pid_t tid, const std::vector<std::string>& frames, const std::string& label,
                     int number) {
    node* n = &root_;
    n->ranks.insert(rank);
    n->threads.insert({rank, tid});
    for (const auto& f : frames) {
        n = &n->children[f];
        n->ranks.insert(rank);
        n->threads.insert({rank, tid});
    }
    if (!label.empty()) {
        n->labels[label].insert({rank, number});
    }
}

}  // namespace ompdbg::debugger
