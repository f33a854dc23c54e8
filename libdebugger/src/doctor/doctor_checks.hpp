#pragma once
// Shared by the files of the doctor's checks (doctor.cpp: the subject, ptrace, the program, the
// machine; doctor_openmp.cpp: the OpenMP runtime, OMP_DEBUG, libompd, the DMPL plugins;
// doctor_mpi.cpp: the MPI starter and the message-queue DLL): what the checks learn about
// the subject, and the helpers they share.

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/debugger/doctor/doctor.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/rsp_client.hpp"

namespace ompdbg::debugger::doctor_impl {

namespace fs = std::filesystem;

/// What the doctor learnt about the subject while checking, for the later checks.
struct findings {
    std::vector<doctor_check> checks;
    fs::path program;                       ///< the executable (empty for the machine)
    std::shared_ptr<dwarf::elf_file> elf;   ///< the executable, when it opened
    std::vector<fs::path> libraries;
    std::optional<pid_t> pid;
    bool can_attach = false;
    std::optional<fs::path> omp_runtime;
    bool runtime_has_ompd = false;
    bool omp_debug_enabled = false;
    std::shared_ptr<plugins::ompd_library> ompd;
    /// A file of the subject's machine (/proc/PID/environ): read here, or through the agent
    /// of the subject's host; nullopt when it cannot be read.
    std::function<std::optional<std::string>(const std::string&)> read_target_file;
    /// The subject's process when it is attached already (one of another host, through its
    /// agent): the live checks use it instead of attaching with ptrace here.
    tracer::process* attached = nullptr;

    void add(std::string name, doctor_status st, std::string found, std::string fix = {}) {
        checks.push_back({std::move(name), st, std::move(found), std::move(fix)});
    }
};

// ---- helpers (doctor.cpp) -------------------------------------------------------------

/// What a command wrote on stdout (its stdin and stderr are /dev/null) and its exit status
/// (128+N when killed by signal N).
struct command_output {
    int status = -1;
    std::string out;
};
/// Runs `argv` (argv[0] an absolute path) with the user's environment; nullopt with `why`
/// when it cannot be started.
std::optional<command_output> run_command(const std::vector<std::string>& argv, std::string& why);

/// What Yama's ptrace_scope (-1: no Yama) and CAP_SYS_PTRACE allow: the ptrace check's
/// status, the scope in words, what it means for ompdbg, and the fix when it is not ok.
struct ptrace_rules {
    doctor_status status = doctor_status::ok;
    std::string scope_desc, verdict, fix;
};
ptrace_rules judge_ptrace(int scope, bool cap);

/// Whether a process's CapEff (hex, as /proc/PID/status shows it) has CAP_SYS_PTRACE.
bool has_ptrace_capability(std::string_view cap_eff_hex);

/// The executable's debug information (f.program, opened here).
void check_program(findings& f);

/// A /proc file's text; nullopt when it cannot be read (or is empty).
std::optional<std::string> read_text(const std::string& p);

/// ompdbg's cache directory ($OMPDBG_CACHE, else ~/.cache/ompdbg): the bootstrap's builds.
fs::path cache_dir();

/// Whether the file name of `p` starts with `prefix`.
bool basename_starts(const fs::path& p, std::string_view prefix);

/// The ELF file `p`, or nullptr when it cannot be opened.
std::shared_ptr<dwarf::elf_file> try_open(const fs::path& p);

/// Whether `f` has a symbol named `symbol`.
bool defines(const dwarf::elf_file& f, std::string_view symbol);

// ---- OpenMP and DMPL (doctor_openmp.cpp) ------------------------------------------------

/// Where the bootstrap builds LLVM's OpenMP runtime with OMPD (the fix it names).
fs::path ompd_runtime_hint();

/// Which OpenMP runtime the subject maps, and whether it has OMPD's symbols.
void check_openmp_runtime(findings& f);

/// Whether OMP_DEBUG=enabled is set (in the process, or for the program).
void check_omp_debug(findings& f);

/// Loads libompd as the debugger would: the bare name "libompd.so" that LLVM's runtime
/// publishes in ompd_dll_locations, resolved by the debugger's own rule
/// (plugins::resolve_ompd_location).
void check_libompd(findings& f, const plugins::plugin_policy& policy);

/// Attaches, asks libompd for the OpenMP threads of the process, detaches: proves that the
/// whole chain answers a real query.
void check_live_ompd_query(findings& f);

/// For a program: runs it (stdin, stdout and stderr on /dev/null, OMP_DEBUG=enabled) up to
/// its runtime's ompd_dll_locations_valid, where the runtime has published its OMPD data,
/// asks libompd for its threads there, and again at its first parallel region when one
/// comes within the limit (the runtime is initialised then), and kills it. A program that ends or takes longer than
/// the limit before its runtime starts is a warning, not a failure of OMPD.
void check_program_ompd_query(findings& f);

/// ompdbg's DMPL plugin for a runtime (plugins/dmpl-libomp, plugins/dmpl-libgomp, built next
/// to ompdbg): found, loadable under the plugin policy, its version string.
void check_dmpl_plugin(findings& f, const plugins::plugin_policy& policy, bool gnu);

/// The DMPL plugin of the subject's runtime (both on the machine).
void check_dmpl(findings& f, const plugins::plugin_policy& policy);

// ---- another host (doctor_remote.cpp) ----------------------------------------------------

/// `doctor --host HOST [PID]`: the agent of HOST (started through `rsh`: present, its
/// version, the features ompdbg needs), ptrace on that host, and for a PID of that host its
/// program, OpenMP runtime, OMP_DEBUG, libompd as ompdbg would load it, a live OMPD query.
void check_remote_host(findings& f, const std::string& rsh, const std::string& host,
                       const plugins::plugin_policy& policy);

// ---- MPI (doctor_mpi.cpp) -------------------------------------------------------------

/// MPIR and MPI2DD in the subject (a starter such as mpirun) or its libraries.
void check_mpi_starter(findings& f);

/// The message-queue DLL of Open MPI and the type information it asks the debugger for.
void check_msgq(findings& f, const plugins::plugin_policy& policy);

}  // namespace ompdbg::debugger::doctor_impl
