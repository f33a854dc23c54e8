// The merged stacks of an MPI job's focused ranks.

#include "ompdbg/debugger/mpi/merged_stacks.hpp"

#include <exception>
#include <string>
#include <vector>

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/mpi/rank_focus.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"

namespace ompdbg::debugger {

stack_tree merged_rank_stacks(session& s) {
    stack_tree tree;
    for_each_focused_rank(s, [&](inferior& inf) {
        if (!inf.process || !inf.process->is_alive()) {
            return;
        }
        for (auto* t : inf.process->threads()) {
            std::vector<stack_frame> frames;
            try {
                frames = s.stack(t->tid());
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "mpi stacks rank {} thread {}: {}", inf.rank, t->tid(), e.what());
                continue;
            }
            // Outermost first: the tree grows from main (or clone3 for other threads).
            std::vector<std::string> names;
            for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
                names.push_back(frame_function_name(*it));
            }
            tree.add(inf.rank, t->tid(), names);
        }
    });
    return tree;
}

}  // namespace ompdbg::debugger
