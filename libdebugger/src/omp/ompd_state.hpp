#pragma once
// The OMPD state of a session and of each of its processes: the libompd library (the
// runtime's ompd_dll_locations, or `set ompd-library`) and each process's OMPD address
// space, on which every OpenMP view and `ompdbg triage` read the runtime. Not a public
// header: it holds the plugin host's objects (the front ends ask omp/ompd_views.hpp).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

class session;

namespace ompd {

/// OMPD state of one session (`session::model_state()`): the setting and the loaded
/// library, shared by every process.
struct omp_library_state {
    std::optional<std::filesystem::path> ompd_library_setting;
    std::shared_ptr<plugins::ompd_library> library;
    /// How `library` was found ("the runtime's ompd_dll_locations", "--ompd-library").
    std::string library_source;
    /// Why no library could be loaded when the runtime announced its list (shown by `omp
    /// info` and the OpenMP commands); empty when none was tried or it worked.
    std::string library_problem;
};

/// OMPD state of one process (`inferior::model_state`): the address space of its target
/// (rebuilt when the target changes: a core file, a new process object).
struct omp_process_state {
    std::unique_ptr<plugins::ompd_address_space> aspace;
    const tracer::target* aspace_target = nullptr;
    pid_t aspace_pid = 0;
    /// The internal breakpoint on ompd_dll_locations_valid: its address and process.
    std::optional<std::uint64_t> dll_valid_site;
    pid_t dll_valid_pid = 0;
};

/// The OMPD state of session `s` (created on first use, destroyed with the session).
omp_library_state& library_state(session& s);

/// The OMPD state of the current inferior of `s` (created on first use, destroyed with its
/// process).
omp_process_state& process_state(session& s);

/// Drops the OMPD address space of every inferior (a new library, a triage sample).
void forget_address_spaces(session& s);

/// Loads the OMPD library for `probe` (the runtime's ompd_dll_locations, then the
/// --ompd-library fallback) into `st` unless one is loaded. Throws one line saying why not.
void ensure_library(omp_library_state& st, const plugins::omp_runtime_probe& probe,
                    const plugins::plugin_policy& policy);

/// The OMPD address space of the session's target, created on first use. Throws one line
/// saying why OpenMP cannot be inspected (no process, libgomp, stripped runtime,
/// OMP_DEBUG not set, no usable libompd, an ompd_rc_t error).
plugins::ompd_address_space& require_ompd(session& s);

/// "main.omp_outlined at omp_nested.c:14" for a code address (function from DWARF or the
/// symbol table; file:line from the line table).
std::string describe_code(session& s, std::uint64_t addr);

}  // namespace ompd
}  // namespace ompdbg::debugger
