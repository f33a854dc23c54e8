#pragma once
/// One debugged process and what the session knows about it.

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/debugger/session/state_slots.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::debugger {

/// One debugged process and what the session knows about it: the only program, or one
/// rank of an MPI job. The session's per-process accessors (process(), selected_tid(),
/// stack(), thread numbers, planted sites, thread_db...) act on the current inferior.
/// The frames of each thread, unwound and symbolized at most once between two resumes:
/// the whole stack (bt, up, finish) or only its innermost frames (what a stop's report or a
/// breakpoint's condition needs). Unwinding a worker thread down to clone symbolizes the
/// runtime's and libc's frames (libc's 2,000 units with libc6-dbg): milliseconds that gdb
/// does not spend at a stop either.
struct stack_cache {
    struct prefix {
        std::size_t asked = 0;            ///< frames asked for; fewer: the stack ends there
        std::vector<stack_frame> frames;
    };
    std::map<pid_t, std::vector<stack_frame>> whole;
    std::map<pid_t, prefix> innermost;

    void clear() {
        whole.clear();
        innermost.clear();
    }
    void erase(pid_t tid) {
        whole.erase(tid);
        innermost.erase(tid);
    }
};

struct inferior {
    std::unique_ptr<tracer::process> process;
    int rank = -1;                      ///< MPI rank; -1 for a program that is not a rank
    std::string host;                   ///< MPIR host name (ranks)
    /// A rank of another host that could not be reached (its agent, its pid): why. It has
    /// no process and `mpi ranks` shows it `lost`.
    std::string lost;
    std::filesystem::path executable;   ///< MPIR executable name (ranks)
    pid_t pid = 0;                      ///< kept after the process ended
    /// How the process ended (exit code / signal), once it did; it stays listed.
    std::optional<tracer::stop_reason> end;
    pid_t selected_tid = 0;
    int selected_frame = 0;
    stack_cache stacks;
    std::map<pid_t, int> thread_numbers;
    int last_thread_number = 0;
    std::deque<std::pair<pid_t, std::uint64_t>> pending_hits;
    std::set<std::uint64_t> planted;
    std::unique_ptr<tracer::thread_db> thread_db;
    bool thread_db_tried = false;
    bool saw_multiple_threads = false;
    std::map<pid_t, std::string> thread_ids;
    /// A vfork followed into the child (follow-fork-mode child): the child shares the
    /// parent's memory, and the parent is held, until the child execs or exits. The pids
    /// of the other side (0: none), as gdb's "is vfork parent/child of inferior N".
    pid_t vfork_parent_pid = 0;
    pid_t vfork_child_pid = 0;
    bool detach_after_vfork = false;   ///< the parent: detached then (detach-on-fork on)
    /// What the model's parts keep about this process (its OMPD address space, DMPL view,
    /// message-queue view, fast-breakpoint agent): dropped when the process is, before it.
    state_slots model_state;

    /// Drops the process and everything kept about it (the model's parts, stacks,
    /// thread_db, queued hits, planted sites), the caches that refer to it first: the
    /// process's destructor kills a launched process and detaches an attached one. The
    /// inferior stays (its number, pid, how it ended).
    void forget_process();
    ~inferior();
};

}  // namespace ompdbg::debugger
