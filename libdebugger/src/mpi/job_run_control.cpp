// What run control of an MPI job shares: planting in the current rank, events kept while
// the job stopped, an abort's report.
#include "ompdbg/debugger/mpi/job_run_control.hpp"

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/mpi/mpi2dd_acquisition.hpp"
#include "ompdbg/debugger/mpi/rank_ends.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

void sync_current_rank(session& s) {
    if (s.process() && s.process()->is_alive()) {
        try {
            refresh_breakpoints(s, false);
        } catch (const std::exception& e) {
            s.observer().job_error(fmt::format("[rank {}] {}", s.current_inferior().rank, e.what()));
        }
    }
}

void absorb_kept_events(session& s, mpi_job* job, const std::vector<tracer::process_group::event>& kept) {
    for (auto& k : kept) {
        if (job && job->mpi2dd && mpi2dd_job_event(s, *job, nullptr, k) != mpi2dd_outcome::not_mine) {
            continue;
        }
        if (job && k.proc == job->starter()) {
            if (handle_starter_event(s, *job, k.why)) {
                job->drop_starter();
            }
            continue;
        }
        inferior* other = inferior_of(s, k.proc);
        if (!other) {
            continue;
        }
        if (k.why.is_process_end()) {
            record_rank_end(s, *other, k.why);
        } else if (k.why.kind == tracer::stop_kind::breakpoint && k.why.breakpoint_addr) {
            other->pending_hits.emplace_back(k.why.tid, k.why.breakpoint_addr->addr());
        } else if (k.why.kind == tracer::stop_kind::thread_created ||
                   k.why.kind == tracer::stop_kind::library_event) {
            s.switch_to(*other);
            consume_background_event(s, k.why);
        }
    }
}

void report_job_abort(session& s, mpi_job& job) {
    std::size_t stopped = 0;
    for (auto& inf : s.inferiors()) {
        if (inf->process && inf->process->is_alive()) {
            ++stopped;
        }
    }
    std::string starter =
        job.starter() ? job.starter()->executable().filename().string() : std::string("the starter");
    s.observer().job_aborted(job.mpi2dd ? job.mpi2dd->abort_message : std::string(), stopped, starter);
}

}  // namespace ompdbg::debugger
