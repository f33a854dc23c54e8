// The ends of an MPI job's ranks and of its starter while the job runs.

#include "ompdbg/debugger/mpi/rank_ends.hpp"

#include <csignal>
#include <cstddef>

#include <fmt/format.h>

#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/run/signal_names.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

inferior* inferior_of(session& s, const tracer::process* p) {
    for (auto& inf : s.inferiors()) {
        if (inf->process.get() == p) {
            return inf.get();
        }
    }
    return nullptr;
}

void record_rank_end(session& s, inferior& rank, const tracer::stop_reason& why) {
    for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
        if (s.inferiors()[i].get() == &rank) {
            s.switch_to(i);
        }
    }
    rank.end = why;
    if (why.connection_lost) {
        // Not an end of the rank: the agent of its host is gone, and the rank with it.
        rank.lost = why.lost_reason;
        rank.end.reset();
    }
    s.observer().rank_ended(rank, why);
    s.drop_process();
}

bool handle_starter_event(session& s, mpi_job& job, const tracer::stop_reason& why) {
    auto* st = job.starter();
    if (why.is_process_end()) {
        s.observer().starter_ended(st ? st->executable().filename().string() : "mpirun", why);
        return true;
    }
    if (why.kind == tracer::stop_kind::signal && (why.signo == SIGINT || why.signo == SIGTRAP)) {
        st->set_pending_signal(why.tid, 0);   // our Ctrl-C, not the starter's
    }
    return false;
}

std::string rank_state(const inferior& inf) {
    if (inf.process && inf.process->is_alive()) {
        return "stopped";
    }
    if (inf.end && inf.end->kind == tracer::stop_kind::exited) {
        return fmt::format("exited({})", inf.end->exit_code);
    }
    if (inf.end) {
        return signal_name(inf.end->signo);
    }
    return inf.lost.empty() ? "gone" : "lost";
}

}  // namespace ompdbg::debugger
