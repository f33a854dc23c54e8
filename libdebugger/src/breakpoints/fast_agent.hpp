#pragma once
/// What the session knows about ompdbg's agent in one process (fast_breakpoints.hpp): its
/// control block, and the site records it holds for the session's breakpoints. Shared by
/// fast_breakpoints.cpp (pads, records), fast_counters.cpp (counters, ignore counts),
/// fast_dprintf.cpp (the dprintf ring) and fast_omp_events.cpp (catch omp fields).

#include "ompdbg/agent/agent_abi.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/dwarf/agent_expr.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::dwarf {
class debug_info;
}

namespace ompdbg::debugger {

/// One site record of the agent in use for a breakpoint location.
struct fast_record {
    unsigned index = 0;            ///< in ompdbg_agent_control.sites
    int breakpoint = 0;            ///< the breakpoint's number
    std::string signature;         ///< condition and action it was made for (a change: a new record)
    /// The agent counts hits and ignores them itself (no thread, not temporary): its
    /// `passed` goes to the breakpoint's hit count, its `ignore` is the breakpoint's.
    bool delegated = false;
    /// Its hits whose condition holds go on without a stop (counted, printed): the agent's
    /// counts after the last stop are read at exit (plant_sync_at_exit).
    bool passes_hits = false;
    std::uint64_t passed_seen = 0;    ///< `passed` already added to the hit count
    std::uint64_t ignore_known = 0;   ///< `ignore` as last written or read
};

/// The agent in the current inferior's process (`inferior::model_state`), for the process
/// object and pid it was made for.
struct agent_state {
    const tracer::process* process = nullptr;
    pid_t pid = 0;
    std::uint64_t control = 0;    ///< run-time address of ompdbg_agent_control (0: not found)
    std::uint64_t evaluate = 0;   ///< of ompdbg_agent_evaluate
    std::uint64_t sync = 0;       ///< of ompdbg_agent_sync (the breakpoint at exit)
    std::uint64_t ring = 0;       ///< of ompdbg_agent_ring (dprintf lines)
    std::uint64_t ring_tail = 0;  ///< lines of the ring printed (the ring's `tail`)
    bool printing = false;        ///< a record prints into the ring: drain it while waiting
    bool sync_planted = false;
    bool forked_cleared = false;
    bool injected = false;        ///< dlopen'ed by us into this attached process (once)
    unsigned next_record = 0;     ///< records are never reused (a thread may be in one)
    std::map<std::uint64_t, fast_record> fast;   ///< site → its record
    std::map<int, std::string> notes;            ///< breakpoint number → why not fast
    std::map<int, std::string> print_notes;      ///< dprintf number → why ompdbg prints it
};

/// The agent's symbols in `proc`, the current inferior's process, looked up once per process.
agent_state& agent_of(session& s, tracer::process& proc);
/// The current process's agent when it has one (control block found), else nullptr.
agent_state* loaded_agent(session& s);

inline std::uint64_t record_addr(const agent_state& a, unsigned i) {
    return a.control + offsetof(ompdbg_agent_control, sites) + i * sizeof(ompdbg_agent_site);
}

/// Writes one 32- or 64-bit field of record `i`.
void write_record_field(tracer::process& proc, const agent_state& a, unsigned i, std::size_t offset,
                        std::uint64_t value, std::size_t size);

/// The hits of record `i` the agent has counted in its shards so far (a record's shards
/// start at what a process forked from this one had counted).
std::uint64_t passed_so_far(tracer::process& proc, const agent_state& a, unsigned i);

/// Fills the dprintf part of `rec` (format program, argument bytecode after the condition's
/// `code_len` bytes) from `bp`'s printf; why the agent cannot print it (empty: it can).
std::string compile_print(const breakpoint& bp, const dwarf::debug_info& info, std::uint64_t file_pc,
                          std::uint64_t bias, ompdbg_agent_site& rec);

/// Gives the records' ignore counts the breakpoints' values the user changed since they
/// were last read or written (all threads stopped).
void push_ignore_counts(session& s, agent_state& a);

/// The fields of `catch omp EVENT if COND` (catch_what "omp EVENT") as the agent reads them
/// at the event's ompd_bp_* function in `runtime`, a module of the current process (fast
/// breakpoints compile COND with them): at parallel-begin reached from __kmp_fork_call,
/// team_size and level of the team it forks, at parallel-end reached from __kmp_join_call
/// those of the team it ends, as the debugger reads them at a stop. Every
/// other field is listed without return addresses, so that the agent refuses it and the
/// debugger evaluates such a condition at each stop.
std::vector<dwarf::agent_caller_field> omp_event_agent_fields(session& s, const tracer::loaded_module& runtime,
                                                              std::string_view catch_what);

}  // namespace ompdbg::debugger
