// The focus of an MPI session, rank by rank.

#include "ompdbg/debugger/mpi/rank_focus.hpp"

#include <cstddef>
#include <vector>

#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

void for_each_focused_rank(session& s, const std::function<void(inferior&)>& fn) {
    std::size_t saved = s.current_index();
    std::vector<std::size_t> focus = s.focus();
    struct restore {
        session& s;
        std::size_t i;
        ~restore() { s.switch_to(i); }
    } r{s, saved};
    for (std::size_t i : focus) {
        if (i >= s.inferiors().size()) {
            continue;
        }
        s.switch_to(i);
        fn(*s.inferiors()[i]);
    }
}

}  // namespace ompdbg::debugger
