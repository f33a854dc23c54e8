#include "run_control.hpp"

#include "commands_watch.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"

#include <atomic>
#include <csignal>
#include <optional>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "commands_mpi.hpp"
#include "commands_omp.hpp"
#include "commands_signals.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "mpi_step.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"
#include "commands_inferiors.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

/// The process being waited for; the SIGINT handler interrupts it.
std::atomic<tracer::process*> g_running{nullptr};
std::atomic<bool> g_interrupt_requested{false};

extern "C" void on_sigint(int) {
    g_interrupt_requested.store(true);
    if (auto* p = g_running.load()) {
        p->interrupt();
    }
}

/// A fork child kept for follow-fork-mode child / detach-on-fork off that `catch fork`
/// reported first: `pid` is the parent that forked.
struct pending_fork {
    pid_t pid = 0;
    tracer::stop_reason why;
};
std::optional<pending_fork> g_fork_to_follow;
/// Forks are followed only by `continue`/`run` (continue_until_stop): `finish`, `until` and
/// the steps hold the process they run and let fork children go.
bool g_follow_forks = false;
/// A fork caught by `catch fork` whose child is let go: gdb says so on the next resume
/// (`pid`: the parent; a new process after `run` or `kill` does not say it).
std::optional<pending_fork> g_release_to_announce;

/// What the process reports of its forks for this session (catch fork/vfork, and every
/// fork outside MPI jobs so that a child let go is announced).
void configure_fork_reports(session& s, tracer::process& proc) {
    proc.set_report_forks(announces_forks(s) || s.process_events().find("fork") ||
                          s.process_events().find("vfork"));
}

/// Prints the detach of a caught fork's child, once, before the resume that lets it go.
void announce_pending_release(session& s) {
    if (g_release_to_announce) {
        if (s.process() && s.process()->pid() == g_release_to_announce->pid) {
            announce_released_child(s, g_release_to_announce->why);
        }
        g_release_to_announce.reset();
    }
}

struct running_guard {
    explicit running_guard(tracer::process& p) { g_running.store(&p); }
    ~running_guard() { g_running.store(nullptr); }
};

/// True when the hit of `tid` at `addr` can be decided with that thread alone, the others
/// still running: report_breakpoint_hit evaluates conditions and ignore counts in that
/// thread's frame, and stops the other threads itself before it shows a stop or runs
/// commands other than a counting `silent` / `continue`. Watchpoints, the OpenMP runtime's
/// internal site, temporary breakpoints (deleted by the hit) and OMPD event conditions (they
/// ask the plugin) need every thread stopped first.
bool hit_decidable_alone(session& s, pid_t tid, std::uint64_t addr) {
    if (!s.watchpoints().empty() || omp_is_internal_site(s, addr) || fast_site_ignores(s, addr)) {
        return false;
    }
    auto hits = breakpoints_at(s, addr);
    if (hits.empty()) {
        return false;
    }
    for (auto& [bp, loc] : hits) {
        if (bp->thread_tid && *bp->thread_tid != tid) {
            continue;
        }
        if (bp->temporary || (!bp->condition.empty() && bp->test_condition)) {
            return false;
        }
    }
    return true;
}

}  // namespace

bool take_interrupt_request() {
    return g_interrupt_requested.exchange(false);
}

void install_interrupt_handler() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
}

bool consume_background_event(session& s, const tracer::stop_reason& why) {
    using tracer::stop_kind;
    switch (why.kind) {
    case stop_kind::thread_created: {
        s.note_multiple_threads();
        s.refresh_thread_numbers();
        std::string id = s.thread_target_id(why.new_tid);
        s.thread_ids()[why.new_tid] = id;
        s.out().event("thread-created", {{"thread", s.thread_number(why.new_tid)}, {"lwp", why.new_tid}},
                      fmt::format("[New {}]", id));
        return true;
    }
    case stop_kind::thread_exited: {
        std::string id;
        if (auto it = s.thread_ids().find(why.tid); it != s.thread_ids().end()) {
            id = it->second;
        } else {
            id = fmt::format("LWP {}", why.tid);
        }
        s.out().event("thread-exited", {{"lwp", why.tid}}, fmt::format("[{} exited]", id));
        if (s.selected_tid() == why.tid && s.process()) {
            s.select_thread(s.process()->pid());
        }
        return true;
    }
    case stop_kind::library_event:
        try {
            refresh_breakpoints(s, true);
        } catch (const std::exception& e) {
            s.out().error(e.what());
        }
        omp_on_library_event(s);
        return true;
    case stop_kind::breakpoint:
        // Internal breakpoints of the plugin hosts (ompd_dll_locations_valid) and of the
        // agent at exit are handled here; a user breakpoint at the same address is still
        // reported.
        if (why.breakpoint_addr && (omp_on_internal_breakpoint(s, why.tid, why.breakpoint_addr->addr()) ||
                                    fast_on_internal_breakpoint(s, why.breakpoint_addr->addr()))) {
            return breakpoints_at(s, why.breakpoint_addr->addr()).empty();
        }
        return false;
    case stop_kind::exec:
        vfork_child_done(s, "exec");   // a followed vfork child leaves its parent's memory
        s.out().event("exec", {{"pid", s.process() ? s.process()->pid() : 0}},
                      fmt::format("process {} is executing new program: {}", s.process()->pid(),
                                  s.process()->executable().string()));
        // The old image's sites went with it (the tracer forgot them): plant every
        // breakpoint again in the new one, as gdb does (`break main` hits again).
        s.planted_sites().clear();
        try {
            refresh_breakpoints(s, true);
        } catch (const std::exception& e) {
            s.out().error(e.what());
        }
        return !catches_process_event(s, why);
    case stop_kind::fork:
        // Forks whose child is kept were taken by resume_and_wait: this child is let go.
        if (catches_process_event(s, why)) {
            g_release_to_announce = pending_fork{s.process() ? s.process()->pid() : 0, why};
            return false;
        }
        announce_released_child(s, why);
        return true;
    case stop_kind::syscall_entry:
    case stop_kind::syscall_exit:
        return !catches_process_event(s, why);
    case stop_kind::signal: {
        // gdb's `handle` table: a signal that does not stop is printed if asked, and stays
        // pending (delivered on the resume) when it passes.
        const auto& policy = s.signals();
        if (policy.stops(why.signo)) {
            return false;
        }
        if (policy.prints(why.signo)) {
            s.out().event("signal", {{"thread", s.thread_number(why.tid)}, {"signal", signal_name(why.signo)}, {"stop", false}},
                          fmt::format("\nProgram received signal {}, {}.", signal_name(why.signo),
                                      signal_description(why.signo)));
        }
        if (!policy.passes(why.signo) && s.process()) {
            s.process()->set_pending_signal(why.tid, 0);
        }
        return true;
    }
    default:
        return false;
    }
}

tracer::stop_reason resume_and_wait(session& s, bool quick_hits) {
    while (true) {
        if (g_fork_to_follow) {
            // A kept fork child reported by `catch fork` at the last stop: taken over now by
            // `continue`; a step lets it go instead (it must not wait, stopped, for ever).
            pending_fork pending = *g_fork_to_follow;
            g_fork_to_follow.reset();
            if (g_follow_forks && s.process() && s.process()->pid() == pending.pid) {
                follow_fork(s, pending.why);
                if (s.process() && s.process()->pid() == pending.why.new_tid) {
                    // Followed before this resume: gdb's first stop in the child does not
                    // say "[Switching to ...]" (it switched as the resume began).
                    s.current_inferior().selected_tid = pending.why.new_tid;
                }
            } else if (s.process()) {
                s.process()->release_fork_child(pending.why.new_tid);
            }
        }
        // The current process may change on the way: a followed fork child.
        auto& proc = s.require_process();
        s.on_resume();
        tracer::stop_reason why;
        const bool keep_children = g_follow_forks && keeps_fork_children(s);
        const bool keep_vfork_children = keep_children && keeps_vfork_children(s);
        check_vfork_parent_resumable(s);
        {
            running_guard guard(proc);
            configure_fork_reports(s, proc);
            proc.set_keep_fork_children(keep_children, keep_vfork_children);
            proc.set_syscall_catch(s.process_events().syscall_filter());
            announce_pending_release(s);
            proc.set_early_breakpoint_reports(quick_hits && !in_rank_step());
            proc.resume();
            // A rank stepping with the others (mpi_step.hpp) waits with the whole job.
            why = in_rank_step() ? wait_in_rank_step(proc) : wait_draining_output(s, proc);
            // Steps (next over fork()) let children go: only continue follows them.
            proc.set_keep_fork_children(false);
            proc.set_early_breakpoint_reports(false);
        }
        // Early reports (the other threads still running) are kept for what needs only the
        // reported thread: a hit decided alone, a thread's creation or exit announced.
        const bool threads_event =
            why.kind == tracer::stop_kind::thread_created || why.kind == tracer::stop_kind::thread_exited;
        if (why.others_running && !threads_event &&
            !(why.breakpoint_addr && hit_decidable_alone(s, why.tid, why.breakpoint_addr->addr()))) {
            proc.stop_others();
            why.others_running = false;
        }
        log::write(log::channel::cli, "stop kind {} tid {}", static_cast<int>(why.kind), why.tid);
        if (why.kind == tracer::stop_kind::fork && keep_children && (!why.is_vfork || keep_vfork_children)) {
            // A kept child. With `catch fork` the fork is reported in the parent first and
            // the child taken over on the next resume, as gdb does.
            if (catches_process_event(s, why)) {
                g_fork_to_follow = pending_fork{proc.pid(), why};
                return why;
            }
            follow_fork(s, why);
            continue;
        }
        if (!why.is_process_end() && consume_background_event(s, why)) {
            continue;
        }
        return why;
    }
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
    struct follow_scope {
        follow_scope() { g_follow_forks = true; }
        ~follow_scope() { g_follow_forks = false; }
    } following;
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

tracer::stop_reason step_one_instruction(session& s, pid_t tid) {
    auto& proc = s.require_process();
    while (true) {
        s.on_resume();
        tracer::stop_reason why;
        {
            running_guard guard(proc);
            configure_fork_reports(s, proc);
            announce_pending_release(s);
            why = proc.step_instruction(tid);
        }
        if (!why.is_process_end() && why.kind != tracer::stop_kind::single_step && consume_background_event(s, why)) {
            // A background event (new thread) interrupted the step: the instruction may not
            // have executed yet; step again only if the pc did not move.
            continue;
        }
        return why;
    }
}

}  // namespace ompdbg::app
