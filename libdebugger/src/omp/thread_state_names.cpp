// Short names of OpenMP thread states (omp/thread_state_names.hpp).

#include "ompdbg/debugger/omp/thread_state_names.hpp"

#include <utility>

namespace ompdbg::debugger {

std::string omp_state_short_name(std::string_view ompd_state) {
    static const std::pair<std::string_view, const char*> names[] = {
        {"work_serial", "serial"},          {"work_parallel", "working"},
        {"work_reduction", "reduction"},    {"wait_barrier", "barrier wait"},
        {"wait_taskwait", "taskwait"},      {"wait_taskgroup", "taskgroup wait"},
        {"wait_mutex", "lock wait"},        {"wait_lock", "lock wait"},
        {"wait_critical", "critical wait"}, {"wait_atomic", "atomic wait"},
        {"wait_ordered", "ordered wait"},   {"wait_target", "target wait"},
        {"idle", "idle"},                   {"overhead", "runtime overhead"},
        {"undefined", "not started"},
    };
    std::string_view state = ompd_state;
    if (state.starts_with("ompt_state_")) {
        state.remove_prefix(11);
    }
    for (const auto& [prefix, name] : names) {
        if (state.starts_with(prefix)) {
            return name;
        }
    }
    std::string out(state);
    for (auto& c : out) {
        c = c == '_' ? ' ' : c;
    }
    return out;
}

}  // namespace ompdbg::debugger
