// `continue` of an MPI job: every focused rank, the starter and the MPI2DD helpers run as
// one group until a stop a user must see; the rest stop with it (all-stop across ranks).
#include <algorithm>
#include <csignal>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/mpi/job_run_control.hpp"
#include "ompdbg/debugger/mpi/mpi2dd_acquisition.hpp"
#include "ompdbg/debugger/mpi/rank_ends.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::debugger {

namespace {

/// While a rank's stop is reported, the observer knows whose it is (rank_stop).
struct rank_stop_scope {
    rank_stop_scope(session& s, const inferior& inf) : s(s), inf(inf) { s.observer().rank_stop(inf); }
    ~rank_stop_scope() { s.observer().rank_stop_ended(inf); }
    rank_stop_scope(const rank_stop_scope&) = delete;
    rank_stop_scope& operator=(const rank_stop_scope&) = delete;
    session& s;
    const inferior& inf;
};

/// Whether `continue` must keep waiting: a focused rank still runs, or every rank of the
/// job ended and the starter is finishing (its last output, its exit status).
bool focused_rank_running(session& s, tracer::process_group& group, mpi_job* job) {
    for (auto* p : group.members()) {
        if (inferior_of(s, p)) {
            return true;
        }
    }
    if (!job || !job->starter()) {
        return false;
    }
    for (auto& inf : s.inferiors()) {
        if (inf->process && inf->process->is_alive()) {
            return false;   // stopped ranks outside the focus hold the job
        }
    }
    return true;
}

/// Ranks that hit a breakpoint in an earlier stop are reported before anything runs.
/// True when one was shown.
bool report_pending_hits(session& s, stop_reporter& report) {
    for (std::size_t i : s.focus()) {
        auto& inf = *s.inferiors()[i];
        while (inf.process && inf.process->is_alive() && !inf.pending_hits.empty()) {
            auto [tid, addr] = inf.pending_hits.front();
            inf.pending_hits.pop_front();
            s.switch_to(i);
            sync_current_rank(s);
            auto* t = inf.process->find_thread(tid);
            try {
                if (!t || t->regs().pc() != addr || breakpoints_at(s, addr).empty()) {
                    continue;
                }
            } catch (const std::exception&) {
                continue;
            }
            rank_stop_scope rank(s, inf);
            if (report.breakpoint_hit(tid, addr)) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

void continue_job(session& s, stop_reporter& report) {
    mpi_job* job = job_of(s);
    for (;;) {
        if (report_pending_hits(s, report)) {
            return;
        }
        tracer::process_group group;
        for (std::size_t i : s.focus()) {
            auto& inf = *s.inferiors()[i];
            if (inf.process && inf.process->is_alive()) {
                s.switch_to(i);
                sync_current_rank(s);
                s.on_resume();
                group.add(*inf.process);
            }
        }
        // Every rank ended but the starter was stopped with them (a step ended the last):
        // `continue` lets it finish and report its exit.
        bool starter_finishing = job && job->starter() && job->starter()->is_alive() &&
                                 std::none_of(s.inferiors().begin(), s.inferiors().end(), [](auto& inf) {
                                     return inf->process && inf->process->is_alive();
                                 });
        if (group.members().empty() && !starter_finishing) {
            error::send("No rank of the focus is running.");
        }
        if (job && job->starter() && job->starter()->is_alive()) {
            group.add(*job->starter());
        }
        if (job && job->mpi2dd) {
            for (auto* p : job->mpi2dd->helpers()) {
                group.add(*p);   // MPI2DD directory processes raise events too
            }
        }
        job_interrupt_scope irq(group);
        group.resume_all();
        for (;;) {
            auto e = group.wait_any();
            if (!e) {
                continue;
            }
            bool forced = false;   // a Ctrl-C the starter saw first, reported on a rank
            if (job && job->mpi2dd) {
                auto outcome = mpi2dd_job_event(s, *job, &group, *e);
                if (outcome == mpi2dd_outcome::handled) {
                    if (!focused_rank_running(s, group, job)) {
                        return;
                    }
                    continue;
                }
                if (outcome == mpi2dd_outcome::abort) {
                    // MPI_Abort: every process stops for inspection before the starter
                    // ends the job.
                    absorb_kept_events(s, job, group.stop_all());
                    report_job_abort(s, *job);
                    return;
                }
            }
            if (job && e->proc == job->starter()) {
                if (handle_starter_event(s, *job, e->why)) {
                    group.remove(*e->proc);
                    job->drop_starter();
                } else if (e->why.kind == tracer::stop_kind::interrupted) {
                    for (auto* p : group.members()) {
                        if (inferior_of(s, p) && p->is_alive()) {
                            tracer::stop_reason why;
                            why.kind = tracer::stop_kind::interrupted;
                            why.signo = SIGINT;
                            why.tid = p->pid();
                            e = tracer::process_group::event{p, why};
                            forced = true;
                            break;
                        }
                    }
                    if (!forced) {
                        group.stop_all();
                        return;
                    }
                } else {
                    e->proc->resume();
                }
                if (!forced) {
                    if (!focused_rank_running(s, group, job)) {
                        return;
                    }
                    continue;
                }
            }
            inferior* inf = inferior_of(s, e->proc);
            if (!inf) {
                e->proc->resume();
                continue;
            }
            s.switch_to(*inf);
            if (!forced && e->why.is_process_end()) {
                group.remove(*e->proc);
                record_rank_end(s, *inf, e->why);
                if (!focused_rank_running(s, group, job)) {
                    return;
                }
                continue;
            }
            if (!forced && consume_background_event(s, e->why)) {
                e->proc->resume();
                continue;
            }
            // A stop the user sees: everything else stops too (all-stop across ranks).
            for (pid_t other : e->why.other_breakpoint_tids) {
                if (auto* t = e->proc->find_thread(other)) {
                    try {
                        inf->pending_hits.emplace_back(other, t->regs().pc());
                    } catch (const std::exception&) {
                    }
                }
            }
            absorb_kept_events(s, job, group.stop_all());
            s.switch_to(*inf);
            sync_current_rank(s);
            rank_stop_scope rank(s, *inf);
            if (!report.stop(e->why)) {
                break;   // not a stop for the user: resume the job again
            }
            return;
        }
    }
}

}  // namespace ompdbg::debugger
