// Ranks stepping together: one fiber per focused rank, one wait for the whole job.

#include "mpi_step.hpp"

#include <csignal>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "commands_mpi.hpp"
#include "commands_mpi2dd.hpp"
#include "ompdbg/debugger/stack/fiber.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::app {

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

}  // namespace

bool is_step_command(const std::string& name) {
    static const std::set<std::string> steps = {"step", "next", "finish", "until", "advance", "stepi", "nexti"};
    return steps.count(name) > 0;
}

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

bool step_focus_together(session& s, const std::function<void()>& handler) {
    auto* job = s.job();
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
        int rank = inf.rank;
        st->task = std::make_unique<fiber>([&s, &handler, &ok, rank] {
            try {
                sync_current_rank(s);
                handler();
            } catch (const std::exception& e) {
                ok = false;
                s.out().error(fmt::format("[rank {}] {}", rank, e.what()));
            }
        });
        group.add(*inf.process);
        steps.push_back(std::move(st));
    }
    if (steps.empty()) {
        error::send("No rank of the focus is running.");
    }
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

    // Each rank's output comes in turns: its label is printed again only when another
    // rank printed since.
    std::optional<std::size_t> labelled;
    bool label = s.focus().size() > 1;
    auto run = [&](rank_step& st) {
        s.switch_to(st.index);
        if (label && labelled != st.index) {
            s.out().set_header(fmt::format("[rank {}]", s.inferiors()[st.index]->rank));
        }
        // JSON: whatever the rank's step reports (its stop) names the rank.
        s.out().set_event_fields({{"rank", s.inferiors()[st.index]->rank}});
        g_running_step = &st;
        st.task->resume();
        g_running_step = nullptr;
        s.out().set_event_fields({});
        if (st.proc && s.inferiors()[st.index]->process.get() != st.proc) {
            // The rank ended during its step (its report dropped the process): the group
            // must not poll it again. Only the address is compared.
            group.remove(*st.proc);
            st.proc = nullptr;
        }
        if (s.out().header_pending()) {
            s.out().set_header({});
        } else {
            labelled = st.index;
        }
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
                    report_mpi2dd_abort(s, *job);
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
            s.out().error(ex.what());
            ok = false;
            try {
                interrupt_waiting();
            } catch (const std::exception& again) {
                s.out().error(again.what());
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
        s.out().error(ex.what());
    }
    absorb_kept_events(s, job, group.stop_all());
    s.out().set_header({});
    s.switch_to(saved < s.inferiors().size() ? saved : 0);
    return ok;
}

}  // namespace ompdbg::app
