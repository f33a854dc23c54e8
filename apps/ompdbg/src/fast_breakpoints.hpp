#pragma once
/// Fast breakpoints (issue 21): conditions evaluated inside the target by ompdbg's agent
/// (libompdbg_agent.so) through jump pads, so that a false condition costs no stop.
/// The agent is preloaded at launch (LD_PRELOAD) when fast breakpoints are on (`set
/// breakpoint fast on|off`, default on; OMPDBG_FAST_BREAKPOINTS=off) and a conditional
/// breakpoint exists, under the plugins' trust policy. After every change of the planted
/// sites, `sync_fast_sites` gives each eligible breakpoint (one condition, no ignore count,
/// no thread, not temporary, alone at its address) a pad, and takes pads away from the
/// others; `info breakpoints` says which path a condition uses.

#include <string>
#include <vector>

namespace ompdbg::app {

class session;
struct breakpoint;

/// Whether fast breakpoints are on (the setting, else OMPDBG_FAST_BREAKPOINTS, else on).
bool fast_breakpoints_on(session& s);
/// The launch environment additions `env` plus the agent's LD_PRELOAD when it is wanted;
/// says on the session's output why not when the agent is refused or cannot work.
std::vector<std::string> agent_launch_environment(session& s, std::vector<std::string> env);
/// Plants or removes pads so that they match the breakpoints (see above). Never throws.
void sync_fast_sites(session& s);
/// In an attached process, which was not started with the agent: loads it with a call of
/// dlopen in the selected thread when a condition wants it (once per process; not while a
/// thread is inside the loader or the allocator, whose locks dlopen takes). Says what it
/// did or why not. Call it at the prompt (all threads stopped), before sync_fast_sites.
void load_agent_on_demand(session& s);
/// " (target evaluation)" for a condition the agent evaluates in the current process,
/// " (host evaluation: WHY)" when the agent is loaded but cannot take it, else "". Only
/// after `set breakpoint fast on|off` or with OMPDBG_FAST_BREAKPOINTS set (as gdb names the
/// path only after `set breakpoint condition-evaluation`), so that the listing stays gdb's.
std::string condition_path_note(session& s, const breakpoint& bp);

}  // namespace ompdbg::app
