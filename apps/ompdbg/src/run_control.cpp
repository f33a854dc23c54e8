#include "run_control.hpp"

#include "commands_watch.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"

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

bool report_stop(session& s, const tracer::stop_reason& why) {
    using tracer::stop_kind;
    collect_fast_counters(s);   // hit counts and ignore counts as they are at this stop
    switch (why.kind) {
    case stop_kind::exited:
    case stop_kind::terminated:
        vfork_child_done(s, "exit");
        report_process_end(s, why);
        return true;
    case stop_kind::breakpoint: {
        if (debugger::infcall::finish_abandoned(s, why)) {
            return true;   // gdb stops silently where a call abandoned earlier returns
        }
        std::uint64_t addr = why.breakpoint_addr ? why.breakpoint_addr->addr() : 0;
        if (!addr) {
            if (auto* t = s.process()->find_thread(why.tid)) {
                addr = t->regs().pc();
            }
        }
        if (check_watchpoint_scope(s, why.tid, addr)) {
            return true;
        }
        return report_breakpoint_hit(s, why.tid, addr);
    }
    case stop_kind::watchpoint:
        return report_watchpoint_hit(s, why);
    case stop_kind::interrupted: {
        tracer::stop_reason sig = why;
        sig.signo = SIGINT;
        report_signal(s, sig);
        return true;
    }
    case stop_kind::signal:
        if (!s.signals().passes(why.signo)) {
            // `handle SIG nopass` (SIGINT and SIGTRAP by default: they are the debugger's).
            s.process()->set_pending_signal(why.tid, 0);
        }
        report_signal(s, why);
        return true;
    case stop_kind::exec:
    case stop_kind::fork:
    case stop_kind::syscall_entry:
    case stop_kind::syscall_exit:
        report_process_event(s, why);
        return true;
    case stop_kind::single_step:
        switch_to_stopped_thread(s, why.tid);
        run_stop_hook(s);
        print_location(s, why.tid, true);
        return true;
    default:
        return false;
    }
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
