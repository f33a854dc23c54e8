#pragma once
/// How the processes of an MPI job end while it runs: a rank that exits, is killed or is
/// lost with its host's agent stays listed (how it ended is its state) and the others go
/// on; the starter's end is the job's. The observer hears of each (rank_ended,
/// starter_ended).

#include <string>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

/// The inferior whose process is `p`, or nullptr (the starter, a directory process).
inferior* inferior_of(session& s, const tracer::process* p);

/// A rank's process ended (`why.is_process_end()`) or its agent's connection was lost
/// (`why.connection_lost`): makes it current, records how it ended (`inferior::end`, or
/// `inferior::lost`), tells the observer (rank_ended) and drops its process.
void record_rank_end(session& s, inferior& rank, const tracer::stop_reason& why);

/// An event of the starter while the ranks run: our own SIGINT/SIGTRAP is taken from it
/// (it would end the job), anything else passes on silently. True when the starter ended
/// (the observer heard it: starter_ended); the caller drops it.
bool handle_starter_event(session& s, mpi_job& job, const tracer::stop_reason& why);

/// A rank's state as `mpi ranks` shows it: "stopped", "exited(N)", the signal that killed
/// it ("SIGSEGV"), "lost" (its host's agent is gone), "gone".
std::string rank_state(const inferior& inf);

}  // namespace ompdbg::debugger
