// Attaching to an MPI starter that is still starting its job (mpir.hpp): the table the
// debugger reads is filled only as the tasks' launch answers come back.

#include "ompdbg/tracer/mpir.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer::mpir {

namespace {

// Often enough that the wait ends soon after the last task answers; seldom enough that
// the starter, stopped for each look, runs nearly all the time.
constexpr std::chrono::milliseconds poll_interval{20};

std::string name_of(process& starter) {
    return starter.executable().filename().string();
}

// The stops a running starter gives besides our own interrupt: its end is an error, the
// rest are resumed over (its signals stay pending and are delivered on the next resume).
// True when the stop ends the wait (a Ctrl-C).
bool ends_wait(process& starter, const stop_reason& why) {
    switch (why.kind) {
    case stop_kind::exited:
        error::send(fmt::format("{} exited with code {:02o} before starting the MPI job.", name_of(starter),
                                why.exit_code));
    case stop_kind::terminated:
        error::send(fmt::format("{} was killed by signal {} before starting the MPI job.", name_of(starter),
                                ::strsignal(why.signo)));
    case stop_kind::signal:
        if (why.signo == SIGINT) {
            starter.set_pending_signal(why.tid, 0);
            return true;
        }
        return false;
    case stop_kind::interrupted:
        return true;
    default:
        return false;
    }
}

}  // namespace

proctable_progress run_until_proctable_complete(process& starter, const interface& iface,
                                                std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        proctable_progress p = iface.progress(starter);
        if (p.complete() || std::chrono::steady_clock::now() >= deadline) {
            return p;
        }
        starter.resume();
        std::optional<stop_reason> why = starter.wait_for_stop(static_cast<int>(poll_interval.count()));
        if (why) {
            if (ends_wait(starter, *why)) {
                return iface.progress(starter);
            }
            continue;   // resumed over at the top of the loop
        }
        // Still running: stop it to look again. Other stops may come first; the
        // interrupt's own stop follows them.
        starter.interrupt();
        for (;;) {
            stop_reason s = starter.wait_for_stop();
            if (s.kind == stop_kind::interrupted) {
                break;
            }
            if (ends_wait(starter, s)) {
                return iface.progress(starter);
            }
            starter.resume();
        }
    }
}

}  // namespace ompdbg::tracer::mpir
