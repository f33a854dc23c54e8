#pragma once
/// OpenMP events through OMPD (issue 19: moved from the CLI, which prints them): what a
/// `catch omp` catchpoint reports at the runtime's ompd_bp_* locations (OpenMP 5.1 §20.6),
/// and the runtime watch, the internal breakpoint on ompd_dll_locations_valid through which
/// the debugger learns which OMPD library the runtime names (OpenMP 5.1 §20.2).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ompdbg::debugger {

class session;

/// ompt_task_flag_t values (OMPT's header) that an event's `task_flags` is made of.
inline constexpr std::int64_t task_flag_implicit = 0x2;
inline constexpr std::int64_t task_flag_explicit = 0x4;
inline constexpr std::int64_t task_flag_final = 0x20000000;

/// An OpenMP event as read at its ompd_bp_* location: the report line and the fields a
/// `catch omp ... if COND` condition can name (team_size, level, active_level, thread_num,
/// and for tasks implicit, final, task_flags).
struct omp_event {
    std::string text;
    std::map<std::string, std::int64_t, std::less<>> fields;
};

/// The event `event` ("parallel-begin", "task-end", "thread-begin"...) that thread `tid`
/// stands at. Throws one line when OpenMP cannot be inspected.
omp_event read_omp_event(session& s, pid_t tid, std::string_view event);

/// Plants the internal breakpoint on the runtime's ompd_dll_locations_valid in the current
/// process once (an LLVM runtime with OMPD); called when libraries are loaded.
void watch_ompd_dll_locations(session& s);

/// Whether `addr` is that internal breakpoint in the current process.
bool is_ompd_dll_locations_site(session& s, std::uint64_t addr);

/// The OMPD library loaded when the runtime named its libraries.
struct ompd_library_loaded {
    std::string path;
    std::string source;  ///< how it was found
    std::int64_t api_version = 0;
    std::string version_string;
};

/// What happened at ompd_dll_locations_valid: the library loaded then, or why none could
/// be (both empty: a library was loaded already).
struct ompd_dll_locations_outcome {
    std::optional<ompd_library_loaded> loaded;
    std::string problem;
};

/// Thread `tid` stopped at `addr`: when that is the internal breakpoint, removes it and
/// loads the OMPD library the runtime names (unless one is loaded); nullopt when `addr` is
/// not the internal breakpoint.
std::optional<ompd_dll_locations_outcome> on_ompd_dll_locations_valid(session& s, pid_t tid, std::uint64_t addr);

}  // namespace ompdbg::debugger
