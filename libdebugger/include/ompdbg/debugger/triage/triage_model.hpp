#pragma once
/// The engine of `ompdbg triage` (issue 10): what one gather sees (triage_gather.cpp), the
/// movement between samples and the verdict drawn from them (triage_verdict.cpp), and the
/// run of every sample (triage_run.cpp). It returns data and never prints: the front end
/// (apps/ompdbg/src/triage.cpp) reads the arguments and renders the report (text, --json,
/// --dot).

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/mpi/queue_data.hpp"
#include "ompdbg/debugger/mpi/wait_for_graph.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::debugger::triage {

/// Exit statuses of `ompdbg triage` (README, "Triage of a stuck job"): a verdict's kind.
enum triage_exit : int {
    triage_nothing_wrong = 0,  ///< no deadlock, and something moved (or one snapshot found nothing)
    triage_gather_failed = 1,  ///< no such process, cannot attach, unreadable core
    triage_usage = 2,          ///< bad arguments
    triage_deadlock = 3,       ///< a cycle of ranks blocked on one another
    triage_hang = 4,           ///< nothing moved in any sample
    triage_crashed = 5,        ///< a core of a process killed by a signal
};

// ---- what one gather sees -------------------------------------------------------------

struct thread_view {
    pid_t tid = 0;
    int number = 0;                      ///< ompdbg's (gdb's) thread number in its process
    std::vector<std::string> frames;     ///< outermost first: the tree's path
    std::vector<std::uint64_t> user_pcs; ///< pcs of the program's own frames (movement)
    std::string where;                   ///< innermost frame of the program's own code
    bool in_program = false;             ///< the innermost frame is the program's own code
    bool openmp = false;
    std::string state;                   ///< OMPD state name ("ompt_state_wait_barrier_explicit")
    std::optional<std::int64_t> thread_num, level, team_size;
    std::string region;                  ///< "main.omp_outlined at omp_hang_barrier.c:56"
    /// voluntary_ctxt_switches just before the gather attached (a sleeping loop that wakes
    /// up keeps its stack but switches).
    std::optional<long> switches;
    /// CPU time (utime + stime, clock ticks) just before the gather attached: a thread that
    /// busy-waits keeps its stack but burns CPU time.
    std::optional<long> cpu_ticks;
    char run_state = '?';   ///< /proc state letter then: 'R' running or runnable, 'S' asleep...
};

/// What the kernel counts for one thread, read before attaching (the attach itself stops
/// it): voluntary context switches and CPU time.
struct task_counters {
    std::optional<long> switches, cpu_ticks;
    char run_state = '?';
};

struct process_view {
    std::map<pid_t, task_counters> counters;  ///< per thread, read before attaching
    /// How far this rank's messages got: the PML's sequence numbers of every communicator
    /// and peer (they count the messages sent to and matched from that peer).
    /// (communicator, peer) -> (send_sequence, expected_sequence) of Open MPI's ob1 PML;
    /// nullopt when not readable, with the reason in mpi_sequences_note.
    std::optional<std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint16_t>>>
        mpi_sequences;
    std::string mpi_sequences_note;
    int rank = -1;               ///< -1: not an MPI rank
    pid_t pid = 0;
    std::string host, executable;
    std::vector<thread_view> threads;
    std::string openmp_runtime;  ///< path, empty when none
    std::string openmp_source;   ///< "OMPD", or how the labels were found
    std::string openmp_note;     ///< why OMPD could not be used
    std::string mpi_call;        ///< outermost MPI_ function of the main thread
    rank_activity activity = rank_activity::running;
    /// True when `communicators` holds the message queues the message-queue DLL reported.
    bool queues_read = false;
    std::vector<queue_communicator> communicators;
    std::string queues_error;
    std::string error;           ///< the process could not be gathered
    /// Every pending operation, "COMM pending send: to rank 1, tag 7, 4 bytes, pending"
    /// (queue_operation_text), in the communicators' order: what the report lists and what
    /// weigh_cycles compares between samples.
    std::vector<std::string> queue_lines;
};

/// One pending operation of a message queue: "to rank 1, tag 7, 4 bytes, pending" (`send`:
/// a pending send; else a receive or an unexpected message).
std::string queue_operation_text(const queue_operation& op, bool send);

struct snapshot {
    std::string kind;            ///< "process", "mpi-job", "core"
    pid_t pid = 0;               ///< the process or the starter
    std::string starter;         ///< the starter's executable
    int core_signal = 0;
    pid_t core_tid = 0;          ///< the core's first thread: the one the signal hit
    std::vector<process_view> procs;
    wait_for_graph graph;
    wait_for_graph::report deadlock;
    std::vector<cleared_wait> cleared;   ///< pending operations of blocked ranks that are no waits
    bool mpi = false;            ///< message queues and the wait-for graph apply
    std::chrono::steady_clock::time_point when;
};

/// What to triage and how often to look.
struct request {
    std::optional<pid_t> pid;
    std::optional<std::pair<std::string, std::string>> core;   ///< (program, core file)
    int samples = 2;
    double interval = 0.5;   ///< seconds between samples
};

/// Takes one snapshot: attaches (or opens the core), gathers and detaches; the processes'
/// objects stay in `graveyard` until the triage ends. Throws ompdbg::error when the target
/// cannot be gathered.
snapshot gather(const request& r, session& s, std::vector<std::unique_ptr<inferior>>& graveyard);

// ---- movement between samples -------------------------------------------------------

struct movement {
    std::set<std::pair<int, pid_t>> moved;   // (rank, tid)
    std::set<int> moved_ranks;
    /// CPU time each thread used between the first and the last sample, in seconds.
    std::map<std::pair<int, pid_t>, double> cpu;
    /// The threads that busy-wait or compute: runnable ('R') at the samples (see busy()).
    std::set<std::pair<int, pid_t>> busy;
    /// Threads in the program's own code that were runnable in every sample but got no CPU
    /// time between the first and the last (a loaded machine): their standing still proves
    /// nothing, so no hang is called on their account.
    std::set<std::pair<int, pid_t>> cpu_starved;
    /// Per rank: MPI messages sent or matched between the first and the last sample, and
    /// between the last two (what still moves at the end); absent when not readable.
    std::map<int, std::uint64_t> messages, messages_last;
    bool messages_readable = false;   ///< for every rank of an MPI job
    std::string messages_note;        ///< why not, for one rank
    double span = 0;                  ///< seconds from the first to the last sample
};

/// What moved between the samples: threads, CPU time, MPI messages.
movement compare(const std::vector<snapshot>& snaps);

// ---- findings and verdict -----------------------------------------------------------

struct verdict {
    std::string kind;
    std::string text;
    int exit_status = triage_nothing_wrong;
};

/// Whether the last sample's wait-for cycle is a deadlock (issue 17): in every sample, and
/// no MPI progress of its ranks between the samples.
struct cycle_evidence {
    bool any = false;         ///< the last sample has a cycle
    bool confirmed = false;   ///< a deadlock: the verdict may say so
    std::string text;         ///< why (not) confirmed, for the report
};
cycle_evidence weigh_cycles(const std::vector<snapshot>& snaps, const movement& m);

/// "1 thread", "3 threads".
std::string count_text(std::size_t n, const char* what);
/// "in rank 2, 7 of 8 OpenMP threads wait in a barrier (...) of region X; ..."
std::vector<std::string> openmp_findings(const snapshot& snap);
/// Collectives some ranks never entered, and the waits that persisted in every sample
/// without MPI progress (momentary waits of a moving job are no findings).
std::vector<std::string> mpi_findings(const std::vector<snapshot>& snaps, const movement& m);
verdict decide(const std::vector<snapshot>& snaps, const movement& m, const cycle_evidence& cycles,
               const std::vector<std::string>& findings);

// ---- the whole triage -----------------------------------------------------------------

/// Every sample and what was drawn from them.
struct report {
    std::vector<snapshot> snaps;   ///< empty when the first gather failed
    /// Why the sample after the last one failed (with no snapshot: why none was taken);
    /// empty when every sample was taken.
    std::string gather_error;
    movement moved;
    cycle_evidence cycles;
    std::vector<std::string> findings;   ///< OpenMP's, then MPI's
    verdict result;                      ///< with no snapshot: "gather-failed"
};

/// Takes `r.samples` snapshots `r.interval` seconds apart through `s` (a session of its
/// own, whose observer gets what happens meanwhile: a core's warnings), each attached and
/// detached again (every process runs on between them), and draws the verdict. The first
/// failing gather ends the sampling. Never throws for what the target causes.
report run(session& s, const request& r);

}  // namespace ompdbg::debugger::triage
