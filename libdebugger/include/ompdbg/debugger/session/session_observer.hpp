#pragma once
/// How the model tells its front end what happens: the model calls, the front end renders
/// (text, JSON, DAP events). The model never waits for an answer and never prints.

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace ompdbg::tracer {
struct stop_reason;
}

namespace ompdbg::debugger {

struct inferior;
struct pending_tasks;           // mpi/job_events.hpp
struct acquired_job;            // mpi/job_events.hpp
struct mpi2dd_tables_changed;   // mpi/job_events.hpp
struct ompd_library_loaded;     // omp/ompd_events.hpp

/// Implemented by each front end (the CLI's in apps/ompdbg/src/cli_observer.hpp). Every
/// call returns at once; what the front end does with it (print, queue an event, drop it)
/// is its own business. The default of each is to drop the event.
class session_observer {
public:
    virtual ~session_observer() = default;
    /// The program's symbols were read (`file`, `run PROG`): gdb prints "Reading symbols
    /// from PROG..." and, without DWARF, "(No debugging symbols found in PROG)".
    virtual void symbols_read(const std::filesystem::path& program, bool has_debug_info) {
        (void)program;
        (void)has_debug_info;
    }
    /// Something the user should know that is not an error (the operation went on).
    virtual void warning(std::string_view text) { (void)text; }
    /// A warning while an expression is evaluated, which goes on (gdb prints "warning:
    /// TEXT" on its error stream).
    virtual void expression_warning(std::string_view text) { (void)text; }
    /// A file of another host is about to be fetched through its agent (`host_path` as
    /// `host` names it): gdb prints "Reading PATH from remote target...".
    virtual void remote_file_fetch(const std::string& host, const std::filesystem::path& host_path) {
        (void)host;
        (void)host_path;
    }
    /// Fast breakpoints (breakpoints/fast_breakpoints.hpp) go without ompdbg's agent in the
    /// target, for reason `why` ("the agent is missing", ...): conditions are evaluated by
    /// the debugger at each stop.
    virtual void agent_unused(std::string_view why) { (void)why; }
    /// The agent `agent` was loaded (dlopen) into the attached process `pid`.
    virtual void agent_loaded(const std::filesystem::path& agent, pid_t pid) {
        (void)agent;
        (void)pid;
    }
    /// A step of an operation failed and the operation went on (breakpoints that cannot be
    /// planted again after a library load or an exec, a fork child that cannot be
    /// debugged): gdb-style front ends print `text` as an error line.
    virtual void error(std::string_view text) { (void)text; }
    /// Whole lines the program printed through the agent (dprintf lines it formatted),
    /// in order, at most 4096 bytes: the front end writes them in one write of their own,
    /// after what it has buffered, so that the program's output never lands inside a line.
    virtual void target_lines(std::string_view text) { (void)text; }

    // ---- run control (run/run_control.hpp, run/fork_follow.hpp) ----
    /// Thread `tid` of the current process appeared; gdb's thread `number` and its target
    /// id ("Thread 0x7ffff7d8a6c0 (LWP 1234)") as `info threads` will show them.
    virtual void thread_created(pid_t tid, int number, const std::string& target_id) {
        (void)tid;
        (void)number;
        (void)target_id;
    }
    /// Thread `tid` of the current process exited (`target_id`: as it was named).
    virtual void thread_exited(pid_t tid, const std::string& target_id) {
        (void)tid;
        (void)target_id;
    }
    /// Thread `tid` (gdb's `number`) received signal `signo`, which `handle` says to print
    /// and not to stop for: the program goes on (with it, if it passes).
    virtual void signal_passed(pid_t tid, int number, int signo) {
        (void)tid;
        (void)number;
        (void)signo;
    }
    /// Process `pid` exec'd `program`; its breakpoints are planted again.
    virtual void process_exec(pid_t pid, const std::filesystem::path& program) {
        (void)pid;
        (void)program;
    }
    /// The child `child` of a fork (`vfork`) is let go: it runs on, detached.
    virtual void fork_child_released(pid_t child, bool vfork) {
        (void)child;
        (void)vfork;
    }
    /// follow-fork-mode child: the debugger follows `child`, forked (`vfork`) by thread
    /// `parent_thread` (its target id) of process `parent`.
    virtual void fork_followed(pid_t parent, const std::string& parent_thread, pid_t child, bool vfork) {
        (void)parent;
        (void)parent_thread;
        (void)child;
        (void)vfork;
    }
    /// A fork child became inferior `number` (gdb's numbering, from 1).
    virtual void inferior_added(int number, pid_t pid) {
        (void)number;
        (void)pid;
    }
    /// follow-fork-mode child with detach-on-fork: the parent `pid` is detached.
    virtual void fork_parent_detached(pid_t pid) { (void)pid; }
    /// The followed vfork child exec'd or exited (`how`: "exec", "exit"): its parent `pid`,
    /// held meanwhile, is detached (detach-on-fork).
    virtual void vfork_parent_detached(pid_t pid, std::string_view how) {
        (void)pid;
        (void)how;
    }
    /// Watchpoint `number` could not be armed in a followed fork child (`error` says why)
    /// and was deleted; gdb prints "Could not insert watchpoint N: ERROR".
    virtual void watchpoint_dropped(int number, std::string_view error) {
        (void)number;
        (void)error;
    }
    /// Inferior `number` (process `pid`, not the current one) was detached.
    virtual void inferior_detached(int number, pid_t pid) {
        (void)number;
        (void)pid;
    }
    /// The OpenMP runtime named its OMPD library and it was loaded.
    virtual void ompd_loaded(const ompd_library_loaded& lib) { (void)lib; }
    /// The OpenMP runtime named its OMPD libraries and none could be loaded (`problem`
    /// says why); OpenMP commands will say so.
    virtual void ompd_unavailable(std::string_view problem) { (void)problem; }

    // ---- MPI jobs (mpi/job_acquisition.hpp, mpi/mpi2dd_acquisition.hpp) ----
    /// One part of a job could not be acquired or acted on and the rest goes on: a rank
    /// that cannot be attached ("Cannot attach to rank 2 (pid P on HOST): ..."), a rank
    /// whose breakpoints cannot be planted ("[rank 1] ..."). gdb-style front ends print it
    /// as an error line.
    virtual void job_error(std::string_view text) { (void)text; }
    /// The same for what gdb-style front ends call a warning ("MPI2DD: not attaching to
    /// ...", a starter that has not started its tasks): printed after "warning: ".
    virtual void job_warning(std::string_view text) { (void)text; }
    /// An attached starter has not started every task yet: the model waits for them.
    virtual void job_tasks_waiting(const pending_tasks& p) { (void)p; }
    /// A launched MPI2DD starter runs (process `pid`) to the start of its job.
    virtual void job_starter_launched(pid_t pid) { (void)pid; }
    /// A starter offers both MPI2DD and MPIR: MPI2DD is used.
    virtual void job_interface_chosen(const std::string& starter) { (void)starter; }
    /// A job was acquired: its ranks are the inferiors, the breakpoints planted in each.
    virtual void job_acquired(const acquired_job& j) { (void)j; }
    /// An MPI2DD table event while the job ran, and the ranks acquired on it.
    virtual void job_tables_changed(const mpi2dd_tables_changed& e) { (void)e; }
    /// A rank of the running job ended (`why`: exited, killed by a signal) or was lost with
    /// its host's agent (`why.connection_lost`, `rank.lost` says why); it stays listed and
    /// the others go on (mpi/rank_ends.hpp).
    virtual void rank_ended(const inferior& rank, const tracer::stop_reason& why) {
        (void)rank;
        (void)why;
    }
    /// The job's starter (its file name) ended (`why`: exited or killed).
    virtual void starter_ended(const std::string& starter, const tracer::stop_reason& why) {
        (void)starter;
        (void)why;
    }
    /// MPI_Abort in an MPI2DD job: every rank is stopped (`stopped_ranks` of them) for
    /// inspection before `starter` (its file name) ends the job; `message` is the abort's.
    virtual void job_aborted(const std::string& message, std::size_t stopped_ranks, const std::string& starter) {
        (void)message;
        (void)stopped_ranks;
        (void)starter;
    }
    /// The ranks step together (mpi/job_run_control.hpp): `rank`'s step runs now, current,
    /// until rank_turn_ended; what is reported meanwhile is that rank's. `labelled`: more
    /// than one rank steps (gdb-style front ends print "[rank N]" before its output, again
    /// only after another rank printed).
    virtual void rank_turn(const inferior& rank, bool labelled) {
        (void)rank;
        (void)labelled;
    }
    /// `rank`'s step yielded or ended: what follows is not that rank's.
    virtual void rank_turn_ended(const inferior& rank) { (void)rank; }
    /// Every rank's step ended (the ranks are stopped again).
    virtual void rank_steps_ended() {}
    /// `rank`'s step failed (`text`: the error, as a command would have printed it).
    virtual void rank_error(const inferior& rank, std::string_view text) {
        (void)rank;
        (void)text;
    }
    /// `continue` of a job (mpi/job_run_control.hpp) shows a stop of `rank` now, until
    /// rank_stop_ended (gdb-style front ends print "[rank N]" first).
    virtual void rank_stop(const inferior& rank) { (void)rank; }
    /// The stop of `rank` was shown.
    virtual void rank_stop_ended(const inferior& rank) { (void)rank; }
    /// `detach`/`kill` of a job ended `ranks` live ranks and the starter.
    virtual void job_ended(std::size_t ranks, bool killed) {
        (void)ranks;
        (void)killed;
    }
};

}  // namespace ompdbg::debugger
