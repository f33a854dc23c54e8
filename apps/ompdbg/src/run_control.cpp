#include "run_control.hpp"

#include "commands_watch.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"

#include <csignal>
#include <optional>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "commands_mpi.hpp"
#include "commands_signals.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "mpi_step.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"
#include "commands_inferiors.hpp"
#include "ompdbg/debugger/run/fork_follow.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

extern "C" void on_sigint(int) {
    debugger::interrupt_running_process();
}

}  // namespace

void install_interrupt_handler() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
}

// The model decides what the stop is (decide_stop, which also counts the hits); the CLI
// only shows it, as gdb does.
bool report_stop(session& s, const tracer::stop_reason& why) {
    return show_stop(s, debugger::decide_stop(s, why));
}

void continue_until_stop(session& s) {
    if (is_mpi_session(s) && !in_rank_step()) {
        mpi_continue_until_stop(s);   // every focused rank and the starter, all-stop
        return;
    }
    auto& st = s.bp_commands_state();
    debugger::follow_forks_scope following(s);
    // A hit decided alone (hit_decidable_alone) left the other threads running; whatever ends the
    // command (a stop after all, an error) leaves the process wholly stopped for the prompt.
    struct settle_scope {
        session& s;
        ~settle_scope() {
            try {
                if (auto* p = s.process(); p && p->is_alive()) {
                    p->stop_others();
                }
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "stopping the other threads: {}", e.what());
            }
        }
    } settle{s};
    while (s.process() && s.process()->is_alive()) {
        // Threads that hit a breakpoint in the same stop stay queued in the tracer, which
        // reports them one by one on the following resumes (each exactly once).
        tracer::stop_reason why = resume_and_wait(s, true);
        st.resume_requested = false;
        if (!report_stop(s, why)) {
            continue;
        }
        if (st.resume_requested && !st.in_breakpoint_commands) {
            st.resume_requested = false;
            continue;
        }
        return;
    }
}

}  // namespace ompdbg::app
