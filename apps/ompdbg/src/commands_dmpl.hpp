#pragma once
/// OpenMP through DMPL (issue 5): the DMPL library of the target's OpenMP runtime (ompdbg's
/// plugins/dmpl-libomp or plugins/dmpl-libgomp, or `--dmpl-library PATH` / `set
/// dmpl-library PATH`), and what the user sees through it: each thread's copy of a
/// threadprivate variable (`print a`, `print &a`, `omp threadprivate a`), `bt` with the
/// runtime's frames folded into one `[omp parallel in main at fig8.c:21, thread 2 of 4]`
/// line, `info locals` of outlined regions with source names and scoping, DMPL lines in
/// `omp info`, and `omp threads` / `omp parallel` for libgomp (which has no OMPD).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "command_table.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

class session;

/// Registers `omp threadprivate`, `set dmpl-library`, and wraps `bt`, `info locals`,
/// `omp info`, `omp threads`, `omp parallel`, `omp bt` (call after the stack and omp groups).
void register_dmpl_commands(command_table& t);

/// Where one thread stands in OpenMP, as ompdbg's DMPL library (the outlined routine names
/// and the runtime's dispatcher) and the thread's stack tell it where OMPD does not exist.
struct dmpl_thread_position {
    pid_t tid = 0;
    /// "omp parallel in main at fig8.c:21"; empty when the thread runs no outlined routine.
    std::string region;
    bool encountering = false;   ///< the thread that encountered the region (OpenMP thread 0)
    /// The thread's number, team size and nesting level where the runtime's per-thread data
    /// tells them without OMPD (libgomp); nullopt elsewhere.
    std::optional<std::int64_t> thread_num, team_size, level;
    /// What the thread does: "barrier wait (GOMP_barrier)", "lock wait (omp_set_lock)",
    /// "critical wait (GOMP_critical_start)", "taskwait (GOMP_taskwait)", "in the region"
    /// (its own code), "idle in the runtime", "not in a parallel region".
    std::string state;
};

/// dmpl_thread_position of every live thread of the session's target (for `ompdbg triage`);
/// drops the DMPL view of the target afterwards. Throws one line when there is no OpenMP
/// runtime or no usable DMPL library.
std::vector<dmpl_thread_position> dmpl_thread_positions(session& s);

}  // namespace ompdbg::app
