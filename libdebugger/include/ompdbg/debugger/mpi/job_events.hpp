#pragma once
/// What the model tells its front end about an MPI job it acquires, acquires more of, or
/// ends (session_observer's job_* calls): data, which each front end words its own way.

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ompdbg::debugger {

/// An attached starter has not started every task of its job yet (srun): the model waits
/// for the rest, up to `set mpi-spawn-timeout`.
struct pending_tasks {
    std::string starter;   ///< the starter's file name (`srun`)
    pid_t pid = 0;
    int started = 0;   ///< entries of MPIR_proctable with a pid
    int size = 0;      ///< entries of MPIR_proctable
};

/// A job was acquired: its ranks are the session's inferiors, with the breakpoints planted.
struct acquired_job {
    std::size_t ranks = 0;
    std::string executable;   ///< the first rank's
    /// Through MPI2DD (the rest of the members are set) rather than MPIR.
    bool mpi2dd = false;
    std::string starter;      ///< the starter's file name
    pid_t starter_pid = 0;    ///< 0 when the starter is gone
    /// One rank as the MPI2DD tables name it.
    struct process {
        int rank = 0;          ///< the session's rank
        pid_t pid = 0;
        std::string comm_world;
        int world_rank = 0;
        pid_t listed_by = 0;   ///< the (meta)directory whose table lists it
    };
    std::vector<process> processes;
    std::vector<pid_t> directory_pids;   ///< the directory processes other than the starter
};

/// An MPI2DD event of the starter or a directory process while the job runs (SPAWN,
/// CONNECT, DIRECTORY_CHANGED, ...), with what the model acquired on it.
struct mpi2dd_tables_changed {
    std::string debug_state;   ///< the event's name (`SPAWN`)
    pid_t raised_by = 0;
    std::vector<pid_t> new_directories;   ///< directory processes attached on it
    /// Why the tables could not be read (the event is reported all the same), or nullopt.
    std::optional<std::string> unreadable;
    /// What the raiser's tables list now (nullopt: the raiser is not a known directory).
    std::optional<std::size_t> listed_processes, listed_directories;
    /// The new ranks (session rank numbers) and their pids: empty when none came.
    std::vector<int> new_ranks;
    std::vector<pid_t> pids;
    std::string comm_world;    ///< the first new process's
    bool in_focus = false;     ///< the focus was the whole job: the new ranks joined it
    /// The spawn that started them (MPI_Comm_spawn), if any.
    struct spawn_parent {
        std::string comm_world;
        int rank = 0;
        int sequence = 0;
    };
    std::optional<spawn_parent> parent;
};

}  // namespace ompdbg::debugger
