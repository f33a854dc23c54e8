#pragma once
/// The target's OpenMP runtime and its DMPL library (issue 5): which runtime a target maps,
/// the session's DMPL library (ompdbg's own for libomp or libgomp, or `set dmpl-library`),
/// its view of each process (kept in the inferior's model_state), where a thread stands in
/// its team (OMPD, or libgomp's own per-thread data), and a thread's copy of a
/// threadprivate variable.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

class session;

enum class runtime_kind { none, libomp, libgomp };

/// Which OpenMP runtime a target maps, and its module (nullptr: none).
struct runtime_info {
    runtime_kind kind = runtime_kind::none;
    const tracer::loaded_module* module = nullptr;
};

/// The OpenMP runtime among `tgt`'s modules (libomp / libiomp5, libgomp), or none.
runtime_info find_runtime(tracer::target& tgt);

/// The runtime of the session's target (none without a target).
runtime_kind runtime_of(session& s);

/// The DMPL library of the session's target as `omp info` shows it.
struct dmpl_library_info {
    std::string path;
    std::string version_string;  ///< DMPL_version_string(), "" when null
    int compatibility = 0;       ///< DMPL_version_compatibility()
    std::string initialiser;     ///< "DMPL_initialise" or "DMPL_initialize"
    /// DMPL_get_rtl_names for C: the main task dispatcher and the microtask invoker.
    std::optional<std::pair<std::string, std::string>> rtl_names;
};

/// The dmpl_library_info of the session's target's DMPL library; throws as require_dmpl
/// does.
dmpl_library_info dmpl_library_of(session& s);

/// Whether the session's target can use a DMPL library: throws one line saying why not (no
/// OpenMP runtime, a library that cannot be loaded).
void require_dmpl(session& s);

/// Drops the DMPL view of the current inferior's process (made again on next use).
void forget_dmpl_view(session& s);

/// `--dmpl-library PATH` / `set dmpl-library PATH`: the library used from now on (the
/// views of every process are made again).
void dmpl_set_library(session& s, const std::string& path);

/// OpenMP thread number and team size of `tid` in its innermost region, or `levels_out`
/// regions outward of it: through OMPD (libomp with OMP_DEBUG; an enclosing region's number
/// is the member index whose thread is this one), or for the innermost region from
/// libgomp's own per-thread data (gomp_team_reader); nullopt when neither can tell.
std::optional<std::pair<std::int64_t, std::int64_t>> omp_position(session& s, pid_t tid, int levels_out = 0);

/// The copy of global variable value `v` (located by the debug information) that thread `tid`
/// sees: the runtime's per-thread copy when `v` is a threadprivate object the OpenMP
/// runtime manages (DMPL_get_tls_address), else `v` unchanged. Throws ompdbg::error with one
/// line when the thread has not allocated its copy yet or the DMPL library fails. A target
/// without OpenMP runtime, or no usable DMPL library, leaves `v` as it is.
dwarf::value dmpl_thread_copy(session& s, pid_t tid, const std::string& name, dwarf::value v);

/// Where one thread stands in OpenMP, as ompdbg's DMPL library (the outlined routine names
/// and the runtime's dispatcher) and the thread's stack tell it where OMPD does not exist.
/// The CLI's DMPL view (apps/ompdbg/src/gomp_views.cpp) fills it for `ompdbg triage` until
/// the folding of the runtime's frames moves here (docs/architecture.md).
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

}  // namespace ompdbg::debugger
