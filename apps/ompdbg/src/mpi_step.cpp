// Which commands step, and the ranks of the focus stepping together (the model's
// step_ranks_together).

#include "mpi_step.hpp"

#include <set>

#include "ompdbg/debugger/mpi/job_run_control.hpp"
#include "session.hpp"

namespace ompdbg::app {

bool is_step_command(const std::string& name) {
    static const std::set<std::string> steps = {"step", "next", "finish", "until", "advance", "stepi", "nexti"};
    return steps.count(name) > 0;
}

bool step_focus_together(session& s, const std::function<void()>& handler) {
    return debugger::step_ranks_together(s, handler);
}

}  // namespace ompdbg::app
