#pragma once
/// The MPIR process-acquisition interface of an MPI starter (`mpirun`): the symbols a
/// debugger reads and writes (MPIR_being_debugged, MPIR_Breakpoint, MPIR_debug_state,
/// MPIR_proctable, MPIR_proctable_size), as the MPI Forum's "MPIR Process Acquisition
/// Interface" document describes them, and the launch protocol on top of them: run the
/// starter until it has spawned the job and stopped in MPIR_Breakpoint.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/base/addr.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::tracer::mpir {

/// MPIR_debug_state values (MPIR document, section 9.5).
constexpr int debug_null = 0;
constexpr int debug_spawned = 1;
constexpr int debug_aborting = 2;

/// One MPIR_PROCDESC; its index in MPIR_proctable is the rank in MPI_COMM_WORLD.
struct proc_desc {
    int rank = 0;
    std::string host_name;
    std::string executable_name;
    pid_t pid = 0;
};

/// How far a starter has filled MPIR_proctable. srun allocates every entry when it sends
/// the launch request, writes each pid as that task's launch answer comes, and the
/// executable names once every task has answered; mpirun sets the table once the job is
/// spawned. A debugger that attaches in between sees entries without a pid or a name.
struct proctable_progress {
    int size = 0;       ///< MPIR_proctable_size (0 while there is no table)
    int with_pid = 0;   ///< entries whose pid and executable name are set
    bool complete() const { return size > 0 && with_pid == size; }
};

/// Where the MPIR symbols are in one starter's address space.
class interface {
public:
    /// Looks the symbols up in every loaded module of `starter` (Open MPI defines them
    /// in libopen-rte.so, other starters in the executable). nullopt when MPIR_Breakpoint
    /// or MPIR_proctable is missing: not an MPI starter (or its libraries are not loaded).
    static std::optional<interface> find(target& starter);
    /// The interface with MPIR_proctable and MPIR_proctable_size at known addresses (the
    /// other symbols unset): decodes a table that no symbol lookup found, as the fuzz
    /// target does with a memory image.
    static interface at(virt_addr proctable, virt_addr proctable_size);

    virt_addr breakpoint_address() const { return breakpoint_; }
    /// Writes MPIR_being_debugged (before the job is spawned: the starter then holds the
    /// ranks in MPI_Init until it returns from MPIR_Breakpoint).
    void set_being_debugged(target& starter, bool on) const;
    int debug_state(target& starter) const;
    /// MPIR_proctable, read with the documented layout {char *host_name; char
    /// *executable_name; int pid;} (24 bytes on x86-64). Throws when the table is absent,
    /// its size is implausible, or an entry cannot be read.
    std::vector<proc_desc> proctable(target& starter) const;
    /// How many entries of MPIR_proctable have their pid yet; never throws for a table
    /// that is absent or being filled (an implausible size counts as no table).
    proctable_progress progress(target& starter) const;

private:
    virt_addr being_debugged_, breakpoint_, debug_state_, proctable_, proctable_size_;
};

/// Runs a freshly launched starter until it has spawned the job and stops in
/// MPIR_Breakpoint with MPIR_debug_state == MPIR_DEBUG_SPAWNED (signals it receives are
/// passed on; library, thread and exec events are resumed over). Returns the interface;
/// the starter is left stopped there. Throws "<starter> exited with code N before
/// spawning the MPI job" (its own error output went to the terminal), or "... is not an
/// MPI starter" when its libraries are loaded and no MPIR interface appeared.
interface run_to_spawn(process& starter);

/// For a starter attached while it is still starting its job's tasks: lets it run,
/// looking at MPIR_proctable every few milliseconds, until every entry has its pid and
/// executable name or `limit` has passed; the starter is left stopped either way. Returns
/// the last progress seen. Signals the starter receives are passed on. Throws when the
/// starter exits or is killed meanwhile; a Ctrl-C (an interrupt not of this loop) ends
/// the wait early.
proctable_progress run_until_proctable_complete(process& starter, const interface& iface,
                                                std::chrono::milliseconds limit);

/// Whether the process `pid` is a fork that has not executed its program yet: it still
/// runs its parent's image, and that image is not `executable` (a table's executable_name).
/// srun writes a task's pid into MPIR_proctable as soon as slurmstepd has forked the task
/// and let it go on to execve, so a debugger that attaches at once, in a job not launched
/// for a debugger, may find a copy of slurmstepd there. False when /proc cannot tell.
bool forked_not_executed(pid_t pid, const std::filesystem::path& executable);

/// For a task attached while forked_not_executed: lets it run until it has executed its
/// program (its exec stop; signals it receives are passed on) or `limit` has passed; the
/// task is left stopped either way. True at once for a task that has executed it already.
/// False when `limit` passed or a Ctrl-C (an interrupt not of this wait) ended the wait.
/// Throws when the task exits or is killed meanwhile.
bool run_until_task_executed(process& task, const std::filesystem::path& executable,
                             std::chrono::milliseconds limit);

}  // namespace ompdbg::tracer::mpir
