// The loop that runs a launched MPI starter to its job (internal/starter_run.hpp).

#include "internal/starter_run.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer::internal {

void run_starter_until_job(process& starter, std::string_view name, std::string_view goal_ing,
                           std::string_view goal, const starter_interface_hooks& hooks) {
    hooks.find();
    for (;;) {
        starter.resume();
        stop_reason why = starter.wait_for_stop();
        switch (why.kind) {
        case stop_kind::exited:
            error::send(fmt::format("{} exited with code {:02o} before {} the MPI job.", name, why.exit_code,
                                    goal_ing));
        case stop_kind::terminated:
            error::send(fmt::format("{} was killed by signal {} before {} the MPI job.", name,
                                    ::strsignal(why.signo), goal_ing));
        case stop_kind::library_event:
            hooks.find();
            break;
        case stop_kind::exec:
            hooks.forget();
            hooks.find();
            break;
        case stop_kind::breakpoint:
            if (hooks.at_breakpoint(why)) {
                return;
            }
            break;
        case stop_kind::signal:
            // The starter's own signals (SIGCHLD from its daemons...) stay pending and are
            // delivered on the next resume; a Ctrl-C is for us.
            if (why.signo == SIGINT) {
                starter.set_pending_signal(why.tid, 0);
                error::send(fmt::format("Interrupted while waiting for the MPI job to {}.", goal));
            }
            break;
        case stop_kind::interrupted:
            error::send(fmt::format("Interrupted while waiting for the MPI job to {}.", goal));
        default:
            break;
        }
    }
}

}  // namespace ompdbg::tracer::internal
