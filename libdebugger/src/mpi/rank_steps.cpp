// Ranks stepping together: one fiber per focused rank, one wait for the whole job.
#include <csignal>
#include <memory>
#include <optional>
#include <vector>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/mpi/job_run_control.hpp"
#include "ompdbg/debugger/mpi/mpi2dd_acquisition.hpp"
#include "ompdbg/debugger/mpi/rank_ends.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/fiber.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::debugger {

namespace {

/// One rank's step: its fiber and, while it yields, the process it waits for.
struct rank_step {
    std::size_t index = 0;                      ///< the inferior
    tracer::process* proc = nullptr;            ///< its process when the step began
    std::unique_ptr<fiber> task;
    tracer::process* waiting = nullptr;         ///< resumed; its stop not delivered yet
    std::optional<tracer::stop_reason> event;   ///< delivered by the loop
};

rank_step* g_running_step = nullptr;   // the step whose fiber runs now

/// The observer hears that the ranks' steps ended, whatever ends them.
struct steps_ended_scope {
    session& s;
    ~steps_ended_scope() { s.observer().rank_steps_ended(); }
};

}  // namespace

bool in_rank_step() {
    return g_running_step != nullptr && fiber::current() != nullptr;
}

tracer::stop_reason wait_in_rank_step(tracer::process& proc) {
    rank_step* me = g_running_step;
    me->waiting = &proc;
    me->event.reset();
    while (!me->event) {
        fiber::yield();
    }
    tracer::stop_reason why = *me->event;
    me->event.reset();
    me->waiting = nullptr;
    return why;
}

bool step_ranks_together(session& s, const std::function<void()>& step) {
    mpi_job* job = job_of(s);
    std::size_t saved = s.current_index();
    bool ok = true;
    std::vector<std::unique_ptr<rank_step>> steps;
    tracer::process_group group;
    for (std::size_t i : s.focus()) {
        auto& inf = *s.inferiors()[i];
        if (!inf.process || !inf.process->is_alive()) {
            continue;   // an ended rank has nothing to step; `mpi ranks` says how it ended
        }
        auto st = std::make_unique<rank_step>();
        st->index = i;
        st->proc = inf.process.get();
        inferior* rank = &inf;
        st->task = std::make_unique<fiber>([&s, &step, &ok, rank] {
            try {
                sync_current_rank(s);
                step();
            } catch (const std::exception& e) {
                ok = false;
                s.observer().rank_error(*rank, e.what());
            }
        });
        group.add(*inf.process);
        steps.push_back(std::move(st));
    }
    if (steps.empty()) {
        error::send("No rank of the focus is running.");
    }
    steps_ended_scope ended{s};
    // The starter forwards the ranks' output and MPI2DD helpers raise events: they run
    // while the ranks step, and stop again with them.
    std::vector<tracer::process*> others;
    if (job && job->starter() && job->starter()->is_alive()) {
        others.push_back(job->starter());
    }
    if (job && job->mpi2dd) {
        for (auto* p : job->mpi2dd->helpers()) {
            others.push_back(p);
        }
    }
    for (auto* p : others) {
        group.add(*p);
        if (!tracer::process_group::is_running(*p)) {
            p->resume();
        }
    }
    job_interrupt_scope irq(group);

    bool label = s.focus().size() > 1;
    auto run = [&](rank_step& st) {
        s.switch_to(st.index);
        inferior& rank = *s.inferiors()[st.index];
        s.observer().rank_turn(rank, label);
        g_running_step = &st;
        st.task->resume();
        g_running_step = nullptr;
        if (st.proc && rank.process.get() != st.proc) {
            // The rank ended during its step (its report dropped the process): the group
            // must not poll it again. Only the address is compared.
            group.remove(*st.proc);
            st.proc = nullptr;
        }
        s.observer().rank_turn_ended(rank);
    };
    auto step_of = [&](tracer::process* p) -> rank_step* {
        for (auto& st : steps) {
            if (st->waiting == p && !st->task->done()) {
                return st.get();
            }
        }
        return nullptr;
    };
    // Ends every waiting step as interrupted (their processes stopped first): Ctrl-C's
    // report, never a fiber unwound with its process running.
    auto interrupt_waiting = [&] {
        absorb_kept_events(s, job, group.stop_all());
        for (auto& st : steps) {
            if (!st->task->done() && st->waiting && !st->event) {
                tracer::stop_reason why;
                why.kind = tracer::stop_kind::interrupted;
                why.signo = SIGINT;
                why.tid = st->waiting->pid();
                st->event = why;
                run(*st);
            }
        }
    };
    auto unfinished = [&] {
        for (auto& st : steps) {
            if (!st->task->done()) {
                return true;
            }
        }
        return false;
    };

    for (auto& st : steps) {
        run(*st);
    }
    while (unfinished()) {
        try {
            auto e = group.wait_any();
            if (!e) {
                continue;
            }
            if (auto* st = step_of(e->proc)) {
                if (e->why.is_process_end()) {
                    s.inferiors()[st->index]->end = e->why;   // `mpi ranks` says how it ended
                    group.remove(*e->proc);                   // the step's report drops it
                }
                st->event = e->why;
                run(*st);
                continue;
            }
            if (job && job->mpi2dd) {
                auto outcome = mpi2dd_job_event(s, *job, &group, *e);
                if (outcome == mpi2dd_outcome::handled) {
                    continue;
                }
                if (outcome == mpi2dd_outcome::abort) {
                    // MPI_Abort: the steps end where the ranks are, the job is kept for
                    // inspection.
                    report_job_abort(s, *job);
                    interrupt_waiting();
                    continue;
                }
            }
            if (job && e->proc == job->starter()) {
                if (handle_starter_event(s, *job, e->why)) {
                    group.remove(*e->proc);
                    job->drop_starter();
                } else {
                    e->proc->resume();
                }
                continue;
            }
            // A process nobody steps (a rank an MPI2DD spawn added): kept for `continue`.
            absorb_kept_events(s, job, {*e});
        } catch (const std::exception& ex) {
            s.observer().error(ex.what());
            ok = false;
            try {
                interrupt_waiting();
            } catch (const std::exception& again) {
                s.observer().error(again.what());
                break;   // cannot happen short of a tracer bug; the fibers' frames are lost
            }
        }
    }
    // Every rank ended during its step: the starter is finishing, let it (its exit is the
    // job's last word), unless Ctrl-C says otherwise.
    auto any_rank_alive = [&] {
        for (auto& inf : s.inferiors()) {
            if (inf->process && inf->process->is_alive()) {
                return true;
            }
        }
        return false;
    };
    try {
        while (job && job->starter() && job->starter()->is_alive() && !any_rank_alive()) {
            auto e = group.wait_any();
            if (!e || e->proc != job->starter()) {
                continue;
            }
            if (handle_starter_event(s, *job, e->why)) {
                group.remove(*e->proc);
                job->drop_starter();
            } else if (e->why.kind == tracer::stop_kind::interrupted) {
                break;
            } else {
                e->proc->resume();
            }
        }
    } catch (const std::exception& ex) {
        s.observer().error(ex.what());
    }
    absorb_kept_events(s, job, group.stop_all());
    s.switch_to(saved < s.inferiors().size() ? saved : 0);
    return ok;
}

}  // namespace ompdbg::debugger
