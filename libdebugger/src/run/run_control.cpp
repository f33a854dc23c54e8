// Run control: resuming the target and waiting for the next stop a user must see.
#include "ompdbg/debugger/run/run_control.hpp"

#include <atomic>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/mpi/job_run_control.hpp"
#include "ompdbg/debugger/omp/ompd_events.hpp"
#include "ompdbg/debugger/run/fork_follow.hpp"
#include "ompdbg/debugger/run/process_events.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/process_group.hpp"
#include "run/run_state.hpp"

namespace ompdbg::debugger {

namespace {

using run_detail::pending_fork;
using run_detail::state_of;

/// The process being waited for; interrupt_running_process() interrupts it. One for the
/// whole program: the CLI's SIGINT handler cannot know a session.
std::atomic<tracer::process*> g_running{nullptr};
std::atomic<bool> g_interrupt_requested{false};
/// The MPI job's processes run together (job_interrupt_scope): interrupted instead.
std::atomic<tracer::process_group*> g_group{nullptr};

struct running_guard {
    explicit running_guard(tracer::process& p) { g_running.store(&p); }
    ~running_guard() { g_running.store(nullptr); }
    running_guard(const running_guard&) = delete;
    running_guard& operator=(const running_guard&) = delete;
};

/// What the process reports of its forks for this session (catch fork/vfork, and every
/// fork outside MPI jobs so that a child let go is announced).
void configure_fork_reports(session& s, tracer::process& proc) {
    proc.set_report_forks(announces_forks(s) || s.process_events().find("fork") ||
                          s.process_events().find("vfork"));
}

/// Reports the detach of a caught fork's child, once, before the resume that lets it go.
void announce_pending_release(session& s) {
    auto& release = state_of(s).release_to_announce;
    if (release) {
        if (s.process() && s.process()->pid() == release->pid) {
            announce_released_child(s, release->why);
        }
        release.reset();
    }
}

/// Breakpoints are planted again (a library appeared, a new image): what fails is
/// reported and the rest goes on.
void refresh_breakpoints_reporting(session& s) {
    try {
        refresh_breakpoints(s, true);
    } catch (const std::exception& e) {
        s.observer().error(e.what());
    }
}

/// The internal breakpoint on the OpenMP runtime's ompd_dll_locations_valid: loads the
/// OMPD library it names and reports it. False when `addr` is not that breakpoint.
bool on_ompd_internal_breakpoint(session& s, pid_t tid, std::uint64_t addr) {
    auto outcome = on_ompd_dll_locations_valid(s, tid, addr);
    if (!outcome) {
        return false;
    }
    if (const auto& lib = outcome->loaded) {
        s.observer().ompd_loaded(*lib);
    } else if (!outcome->problem.empty()) {
        s.observer().ompd_unavailable(outcome->problem);
    }
    return true;
}

/// A kept fork child reported by `catch fork` at the last stop: taken over now by
/// `continue`; a step lets it go instead (it must not wait, stopped, for ever).
void settle_fork_to_follow(session& s) {
    auto& st = state_of(s);
    if (!st.fork_to_follow) {
        return;
    }
    pending_fork pending = *st.fork_to_follow;
    st.fork_to_follow.reset();
    if (st.follow_forks && s.process() && s.process()->pid() == pending.pid) {
        follow_fork(s, pending.why);
        if (s.process() && s.process()->pid() == pending.why.new_tid) {
            // Followed before this resume: gdb's first stop in the child does not say
            // "[Switching to ...]" (it switched as the resume began).
            s.current_inferior().selected_tid = pending.why.new_tid;
        }
    } else if (s.process()) {
        s.process()->release_fork_child(pending.why.new_tid);
    }
}

}  // namespace

void interrupt_running_process() {
    if (auto* g = g_group.load()) {
        g->interrupt();   // an MPI job's processes, waited for together
        return;
    }
    g_interrupt_requested.store(true);
    if (auto* p = g_running.load()) {
        p->interrupt();
    }
}

job_interrupt_scope::job_interrupt_scope(tracer::process_group& group) : previous_(g_group.load()) {
    g_group.store(&group);
}

job_interrupt_scope::~job_interrupt_scope() {
    g_group.store(previous_);
}

bool take_interrupt_request() {
    return g_interrupt_requested.exchange(false);
}

follow_forks_scope::follow_forks_scope(session& s) : s_(s), was_(state_of(s).follow_forks) {
    state_of(s_).follow_forks = true;
}

follow_forks_scope::~follow_forks_scope() {
    state_of(s_).follow_forks = was_;
}

// Watchpoints, the OpenMP runtime's internal site, temporary breakpoints (deleted by the
// hit) and OMPD event conditions (they ask the plugin) need every thread stopped first;
// conditions and ignore counts are evaluated in the hit thread's frame, and the caller
// stops the other threads before it shows a stop or runs commands other than a counting
// `silent` / `continue`.
bool hit_decidable_alone(session& s, pid_t tid, std::uint64_t addr) {
    if (!s.watchpoints().empty() || is_ompd_dll_locations_site(s, addr) || fast_site_ignores(s, addr)) {
        return false;
    }
    auto hits = breakpoints_at(s, addr);
    if (hits.empty()) {
        return fast_is_exit_sync_site(s, addr);   // the agent's at exit: its counts are read alone
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

bool consume_background_event(session& s, const tracer::stop_reason& why) {
    using tracer::stop_kind;
    switch (why.kind) {
    case stop_kind::thread_created: {
        s.note_multiple_threads();
        s.refresh_thread_numbers();
        std::string id = s.thread_target_id(why.new_tid);
        s.thread_ids()[why.new_tid] = id;
        s.observer().thread_created(why.new_tid, s.thread_number(why.new_tid), id);
        return true;
    }
    case stop_kind::thread_exited: {
        std::string id;
        if (auto it = s.thread_ids().find(why.tid); it != s.thread_ids().end()) {
            id = it->second;
        } else {
            id = fmt::format("LWP {}", why.tid);
        }
        s.observer().thread_exited(why.tid, id);
        if (s.selected_tid() == why.tid && s.process()) {
            s.select_thread(s.process()->pid());
        }
        return true;
    }
    case stop_kind::library_event:
        refresh_breakpoints_reporting(s);
        watch_ompd_dll_locations(s);
        return true;
    case stop_kind::breakpoint:
        // Internal breakpoints of the plugin hosts (ompd_dll_locations_valid) and of the
        // agent at exit are handled here; a user breakpoint at the same address is still
        // reported.
        if (why.breakpoint_addr && (on_ompd_internal_breakpoint(s, why.tid, why.breakpoint_addr->addr()) ||
                                    fast_on_internal_breakpoint(s, why.breakpoint_addr->addr()))) {
            return breakpoints_at(s, why.breakpoint_addr->addr()).empty();
        }
        return false;
    case stop_kind::exec:
        vfork_child_done(s, "exec");   // a followed vfork child leaves its parent's memory
        s.observer().process_exec(s.process() ? s.process()->pid() : 0,
                                  s.process() ? s.process()->executable() : std::filesystem::path());
        // The old image's sites went with it (the tracer forgot them): plant every
        // breakpoint again in the new one, as gdb does (`break main` hits again).
        s.planted_sites().clear();
        refresh_breakpoints_reporting(s);
        return !catches_process_event(s, why);
    case stop_kind::fork:
        // Forks whose child is kept were taken by resume_and_wait: this child is let go.
        if (catches_process_event(s, why)) {
            state_of(s).release_to_announce = pending_fork{s.process() ? s.process()->pid() : 0, why};
            return false;
        }
        announce_released_child(s, why);
        return true;
    case stop_kind::syscall_entry:
    case stop_kind::syscall_exit:
        return !catches_process_event(s, why);
    case stop_kind::signal: {
        // gdb's `handle` table: a signal that does not stop is reported if asked, and stays
        // pending (delivered on the resume) when it passes.
        const auto& policy = s.signals();
        if (policy.stops(why.signo)) {
            return false;
        }
        if (policy.prints(why.signo)) {
            s.observer().signal_passed(why.tid, s.thread_number(why.tid), why.signo);
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
    auto& st = state_of(s);
    while (true) {
        settle_fork_to_follow(s);
        // The current process may change on the way: a followed fork child.
        auto& proc = s.require_process();
        s.on_resume();
        tracer::stop_reason why;
        const bool keep_children = st.follow_forks && keeps_fork_children(s);
        const bool keep_vfork_children = keep_children && keeps_vfork_children(s);
        check_vfork_parent_resumable(s);
        {
            running_guard guard(proc);
            configure_fork_reports(s, proc);
            proc.set_keep_fork_children(keep_children, keep_vfork_children);
            proc.set_syscall_catch(s.process_events().syscall_filter());
            announce_pending_release(s);
            // A rank stepping with the others (mpi/job_run_control) waits with the whole job.
            const bool with_others = in_rank_step();
            proc.set_early_breakpoint_reports(quick_hits && !with_others);
            // A new thread is announced from its own registers (consume_background_event).
            proc.set_resume_creators_early(quick_hits && !with_others);
            proc.resume();
            why = with_others ? wait_in_rank_step(proc) : wait_draining_output(s, proc);
            // Steps (next over fork()) let children go: only continue follows them.
            proc.set_keep_fork_children(false);
            proc.set_early_breakpoint_reports(false);
            proc.set_resume_creators_early(false);
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
                st.fork_to_follow = pending_fork{proc.pid(), why};
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

tracer::stop_reason step_one_instruction(session& s, pid_t tid) {
    auto& proc = s.require_process();
    while (true) {
        s.on_resume();
        tracer::stop_reason why;
        {
            running_guard guard(proc);
            configure_fork_reports(s, proc);
            announce_pending_release(s);
            // A rank stepping with the others (mpi/job_run_control) waits with the whole
            // job: a step that blocks in a system call (a receive) holds nobody up, and
            // Ctrl-C stops it.
            if (in_rank_step() && tracer::process_group::start_step(proc, tid)) {
                why = wait_in_rank_step(proc);
            } else {
                why = proc.step_instruction(tid);
            }
        }
        if (!why.is_process_end() && why.kind != tracer::stop_kind::single_step && consume_background_event(s, why)) {
            // A background event (new thread) interrupted the step: the instruction may not
            // have executed yet; step again only if the pc did not move.
            continue;
        }
        return why;
    }
}

}  // namespace ompdbg::debugger
