#pragma once
/// An MPI job the session holds (issues 6 and 7): the starter (mpirun, srun, an MPI2DD
/// starter), kept traced, with its MPIR interface and process table, or its MPI2DD side
/// (the directory processes and what their tables said of each rank). The ranks themselves
/// are the session's inferiors. Acquiring and ending a job: job_acquisition.hpp and
/// mpi2dd_acquisition.hpp.

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/mpi/mpi_job_base.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/mpi2dd.hpp"
#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::debugger {

class mpi2dd_job;

/// The starter of an MPI job (kept traced: it forwards the ranks' output and would take a
/// Ctrl-C meant for us), its MPIR interface and process table. Ends the starter with it:
/// kills a launched one, detaches an attached one.
class mpi_job final : public mpi_job_base {
public:
    mpi_job(std::unique_ptr<tracer::process> starter, tracer::mpir::interface iface,
            std::vector<tracer::mpir::proc_desc> table, bool launched);
    ~mpi_job() override;
    mpi_job(const mpi_job&) = delete;
    mpi_job& operator=(const mpi_job&) = delete;
    /// nullptr once the starter exited.
    tracer::process* starter() { return starter_.get(); }
    const tracer::mpir::interface& mpir() const { return mpir_; }
    const std::vector<tracer::mpir::proc_desc>& proctable() const { return table_; }
    /// Launched by us (`run -- mpirun`: the job dies with the session) or attached.
    bool launched() const override { return launched_; }
    void drop_starter();
    /// Set when the job was acquired through MPI2DD (then mpir() and proctable() are empty):
    /// its directory processes and table events.
    std::unique_ptr<mpi2dd_job> mpi2dd;
    /// Plants the session's breakpoints in the current rank (throws what fails). Called for
    /// each rank the job acquires, also while it runs (MPI2DD's new processes). Empty: the
    /// model's refresh_breakpoints.
    std::function<void(session&)> plant_breakpoints;

private:
    std::unique_ptr<tracer::process> starter_;
    tracer::mpir::interface mpir_;
    std::vector<tracer::mpir::proc_desc> table_;
    bool launched_;
};

/// The MPI2DD side of an mpi_job (mpi_job::mpi2dd): the starter's interface, the traced
/// directory processes, and what the tables said about each acquired rank.
class mpi2dd_job {
public:
    mpi2dd_job(tracer::mpi2dd::interface starter, bool launched);
    /// Kills (launched job) or detaches the directory processes.
    ~mpi2dd_job();
    mpi2dd_job(const mpi2dd_job&) = delete;
    mpi2dd_job& operator=(const mpi2dd_job&) = delete;

    /// A rank as the tables describe it (keyed by host and pid in ranks()).
    struct rank_desc {
        tracer::mpi2dd::proc_desc desc;
        pid_t listed_by = 0;   ///< the (meta)directory whose proctable names it
    };
    /// The host a table names and the pid there: pids of different hosts (their own PID
    /// namespaces) repeat.
    using rank_key = std::pair<std::string, pid_t>;
    /// One process with an MPI2DD_info that lists others (starter, directories).
    struct directory {
        std::unique_ptr<tracer::process> proc;   ///< null for the starter (mpi_job owns it)
        tracer::mpi2dd::interface iface;
        tracer::mpi2dd::info last;               ///< its tables at the last event
        pid_t pid = 0;
    };

    const tracer::mpi2dd::interface& starter_interface() const { return starter_; }
    std::map<rank_key, rank_desc>& ranks() { return ranks_; }
    std::vector<directory>& directories() { return dirs_; }
    /// The traced directory processes other than the starter (members of the job's group).
    std::vector<tracer::process*> helpers();
    bool launched() const { return launched_; }
    std::string abort_message;
    /// Directory processes attached by the last table walk, not yet in the job's group.
    std::vector<tracer::process*> attached_since_event;

private:
    tracer::mpi2dd::interface starter_;
    bool launched_;
    std::map<rank_key, rank_desc> ranks_;
    std::vector<directory> dirs_;
};

/// The session's MPI job, or nullptr: none, or a job the model made itself without a
/// starter (triage's attached ranks), which no command may take for one.
mpi_job* job_of(session& s);

}  // namespace ompdbg::debugger
