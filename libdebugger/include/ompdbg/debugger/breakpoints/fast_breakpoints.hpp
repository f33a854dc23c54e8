#pragma once
/// Fast breakpoints (issue 21): conditions evaluated inside the target by ompdbg's agent
/// (libompdbg_agent.so) through jump pads, so that a false condition costs no stop.
/// The agent is preloaded at launch (LD_PRELOAD) when fast breakpoints are on (`set
/// breakpoint fast on|off`, default on; OMPDBG_FAST_BREAKPOINTS=off) and a breakpoint has a
/// condition, an ignore count, commands that only count (`silent`, `continue`) or is a
/// dprintf, under the plugins' trust policy. After every change of the planted sites,
/// `sync_fast_sites` gives each such breakpoint alone at its address a pad, and takes pads
/// away from the others: the agent filters the condition and, for a breakpoint of every
/// thread that is not temporary, ignores, counts and prints (dprintf) hits itself;
/// `collect_fast_counters` brings its counts and lines back at every stop, and
/// `wait_draining_output` the lines while the program runs. `info breakpoints` says which
/// path a condition and a dprintf use. What the user is told (the agent loaded or refused,
/// the lines the agent printed) goes to the session's observer; the rest is returned.

#include <cstdint>
#include <string>
#include <vector>

#include "ompdbg/debugger/session/session_fwd.hpp"

namespace ompdbg::tracer {
class process;
struct stop_reason;
}  // namespace ompdbg::tracer

namespace ompdbg::debugger {

/// Whether fast breakpoints are on (the setting, else OMPDBG_FAST_BREAKPOINTS, else on).
bool fast_breakpoints_on(session& s);
/// The launch environment additions `env` plus the agent's LD_PRELOAD when it is wanted;
/// tells the observer why not (agent_unused) when the agent is refused or cannot work.
std::vector<std::string> agent_launch_environment(session& s, std::vector<std::string> env);
/// Plants or removes pads so that they match the breakpoints (see above). Never throws.
void sync_fast_sites(session& s);
/// In an attached process, which was not started with the agent: loads it with a call of
/// dlopen in the selected thread when a condition wants it (once per process; not while a
/// thread is inside the loader or the allocator, whose locks dlopen takes). Tells the
/// observer what it did or why not (agent_loaded, agent_unused). Call it at the prompt (all threads stopped), before sync_fast_sites.
void load_agent_on_demand(session& s);
/// Whether the breakpoint's commands only count its hits: `silent` then `continue`.
bool only_counts(const breakpoint& bp);
/// Adds the hits the agent ignored or counted without a stop to the breakpoints' hit
/// counts, and takes back what is left of ignore counts it decrements. Call at every stop
/// (and before `info breakpoints`). Never throws.
void collect_fast_counters(session& s);
/// Gives the agent the ignore counts ompdbg changed (a hit it ignored itself, `ignore`).
/// Only with every thread stopped. Never throws.
void push_fast_ignore_counts(session& s);
/// Whether the agent keeps the ignore count of the breakpoint at `addr` and it is not
/// exhausted as far as ompdbg knows: a hit reported there must be decided with every
/// thread stopped (ompdbg then ignores it and tells the agent, push_fast_ignore_counts).
bool fast_site_ignores(session& s, std::uint64_t addr);
/// The hit of the agent's breakpoint at exit (ompdbg_agent_sync): reads the counters one
/// last time and returns true; false for any other address.
bool fast_on_internal_breakpoint(session& s, std::uint64_t addr);
/// Whether `addr` is that breakpoint: its hit needs only the exiting thread stopped (the
/// counters are read from memory, the dprintf lines drained as while running).
bool fast_is_exit_sync_site(session& s, std::uint64_t addr);
/// " (target evaluation)" for a condition the agent evaluates in the current process,
/// " (host evaluation: WHY)" when the agent is loaded but cannot take it, else "". Only
/// after `set breakpoint fast on|off` or with OMPDBG_FAST_BREAKPOINTS set (as gdb names the
/// path only after `set breakpoint condition-evaluation`), so that the listing stays gdb's.
std::string condition_path_note(session& s, const breakpoint& bp);

/// Whether the agent ignores or counts `bp`'s hits in the current process (an ignore count
/// or `silent` + `continue` commands, at a site with a pad): `info breakpoints` says so.
bool counted_in_target(session& s, const breakpoint& bp);

/// For a dprintf in a process with the agent: "\tprinted in the target" when the agent
/// formats its lines, "\tprinted by the debugger: WHY" when it cannot; else "".
std::string print_path_note(session& s, const breakpoint& bp);
/// For a condition or dprintf in an MPI job where some rank has the agent: one line per
/// path, "\tranks 0-2: target evaluation", "\trank 3: host evaluation (no agent)",
/// "\tranks 0,1: printed in the target"; else none (gdb's listing).
std::vector<std::string> rank_path_notes(session& s, const breakpoint& bp);
/// Gives the observer the dprintf lines the agent finished (target_lines), in order, and
/// frees their room in its ring. The process may be running (`at_stop` false: a poll while waiting). Returns true
/// when it read the ring, having forgotten the process's memory cache first. Never throws.
bool drain_fast_output(session& s, bool at_stop = true);
/// proc.wait_for_stop(), draining the agent's dprintf lines every few milliseconds while
/// the process runs when a record prints.
tracer::stop_reason wait_draining_output(session& s, tracer::process& proc);

}  // namespace ompdbg::debugger
