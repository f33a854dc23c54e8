#pragma once
/// MPI jobs acquired through the MPI-2 debugger interface (issue 7, MPI2DD): `run -- STARTER`
/// and `attach STARTER_PID` when the starter defines MPI2DD_info (preferred over MPIR when
/// it has both). The starter, and in a hierarchical job every directory and metadirectory
/// process, stays traced with an internal breakpoint on MPI2DD_breakpoint; each event it
/// raises (SPAWN, CONNECT, ACCEPT, JOIN, DIRECTORY_CHANGED, METADIRECTORY_CHANGED, ABORT)
/// is handled while the job runs: new processes of the tables become ranks of the session
/// (inferiors), an abort stops every rank and shows the abort message. A process named by
/// a table is attached only when it descends from the starter or runs the executable the
/// table names. `mpi ranks` shows comm worlds and spawn parents; `mpi directories` the
/// interface processes.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command_table.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/mpi2dd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::app {

class session;
class mpi_job;
using debugger::inferior;

/// The MPI2DD side of an mpi_job (mpi_job::mpi2dd): the starter's interface, the traced
/// directory processes, and what the tables said about each acquired rank.
class mpi2dd_job {
public:
    mpi2dd_job(tracer::mpi2dd::interface starter, bool launched);
    /// Kills (launched job) or detaches the directory processes.
    ~mpi2dd_job();

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

/// Registers `mpi directories`.
void register_mpi2dd_commands(command_table& t);

/// Whether `program` is run as an MPI2DD starter: it or a library it names defines
/// MPI2DD_info and MPI2DD_breakpoint, and the mpi_flags initialised in the file either
/// have MPI2DD_MPIFLAG_I_AM_STARTER or are still zero (filled at run time).
bool is_mpi2dd_starter(const std::filesystem::path& program);
/// `run` of an MPI2DD starter: launches it, runs it to MPI2DD_DEBUG_START, acquires every
/// process of its tables (following directories), opens their gates, plants the
/// breakpoints in every rank; the job is stopped there (the next continue releases it).
void start_mpi2dd_job(session& s, const std::filesystem::path& starter, const std::vector<std::string>& args);
/// `attach PID` / `mpi attach PID`: when `proc` defines a valid MPI2DD_info of a starter,
/// acquires its job, takes `proc` and returns true. Returns false (proc untouched) when it
/// has no MPI2DD_info. Throws for a malformed interface or a job without processes.
bool attach_mpi2dd_job(session& s, std::unique_ptr<tracer::process>& proc);

/// What mpi2dd_job_event did with an event of the job's group.
enum class mpi2dd_outcome {
    not_mine,   ///< neither an MPI2DD event nor a directory process: the caller handles it
    handled,    ///< acted on (and the process resumed when a group was given)
    abort,      ///< MPI2DD_DEBUG_ABORT: the caller stops every process and returns to the user
};
/// An event of the starter or of a directory process while the job runs. `group` (may be
/// null for events kept by stop_all: then nothing is resumed): new ranks are attached,
/// added to the session (and to the group when the focus is the whole job) and released.
mpi2dd_outcome mpi2dd_job_event(session& s, mpi_job& job, tracer::process_group* group,
                                const tracer::process_group::event& e);
/// After an abort stopped the job: prints the abort message.
void report_mpi2dd_abort(session& s, mpi_job& job);
/// `mpi ranks` of an MPI2DD job (comm worlds, world ranks, spawn parents).
void print_mpi2dd_ranks(session& s, mpi_job& job);

}  // namespace ompdbg::app
