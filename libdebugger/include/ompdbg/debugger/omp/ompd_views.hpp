#pragma once
/// What the OpenMP commands show of a libomp process through OMPD (issue 19: moved from the
/// CLI, which prints these structs): the runtime and its OMPD library, the devices, each
/// thread's OpenMP state, the tree of active parallel regions, the tasks and the ICVs. The
/// calls into libompd (plugins/ompd.hpp) stay in libdebugger. Every function throws one
/// line (ompd::require_ompd) when OpenMP cannot be inspected.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ompdbg::debugger {

class session;

/// The OpenMP runtime mapped by the session's target ("" when none is found). Throws "The
/// program is not being run." without a target.
std::string openmp_runtime_path(session& s);

/// Whether OpenMP can be inspected in the session's target through OMPD: throws one line
/// saying why not (no process, libgomp, a stripped runtime, OMP_DEBUG not set, no usable
/// libompd, an OMPD error), as every view here does before it reads anything.
void check_inspectable(session& s);

/// `--ompd-library PATH` / `set ompd-library PATH`: the libompd to use when the runtime names
/// none that loads; the loaded library and every process's address space are dropped (made
/// again on next use).
void set_ompd_library(session& s, const std::string& path);

/// The OMPD library of the session's target (`omp info`).
struct ompd_library_info {
    std::string path;
    std::string found;            ///< how it was found ("the runtime's ompd_dll_locations", ...)
    std::int64_t api_version = 0;
    std::string version_string;
    std::optional<std::int64_t> omp_version;  ///< the runtime's OpenMP version, when OMPD tells
};
ompd_library_info ompd_library_of(session& s);

/// The devices of the session's target (`omp devices`): the host, and whether the runtime
/// announces offload devices (it defines ompd_bp_device_begin).
struct omp_devices_info {
    pid_t pid = 0;
    bool offload_announced = false;
    std::string runtime_path;
};
omp_devices_info omp_devices(session& s);

/// One thread of `omp threads`.
struct omp_thread_row {
    pid_t tid = 0;
    bool openmp = false;  ///< false: not an OpenMP thread (the rest is unset)
    std::optional<std::int64_t> thread_num, level, team_size;
    std::string state;    ///< OMPD's state name
    std::uint64_t wait_id = 0;
    std::string task;     ///< the current task's function ("main.omp_outlined at f.c:14")
};
std::vector<omp_thread_row> omp_thread_rows(session& s);

/// One active parallel region, with the regions nested in it (`omp parallel`).
struct omp_region {
    std::optional<std::int64_t> level, team_size;
    std::string function;  ///< its implicit task 0's function, described
    struct member {
        int thread_num = 0;
        std::optional<pid_t> lwp;
        std::string state;
        std::uint64_t wait_id = 0;
    };
    std::vector<member> threads;
    std::vector<omp_region> regions;
};
/// The outermost active regions (the initial thread's implicit region is not one).
std::vector<omp_region> omp_regions(session& s);

/// One task of `omp tasks`; tasks are numbered from 1 in the order of the vector.
struct omp_task_row {
    bool implicit = false, final = false;
    std::string function;             ///< described, or "no task function (the initial task)"
    std::optional<pid_t> running_on;  ///< nullopt: suspended
    std::string parent = "-";         ///< the generating task's number, "-" when unknown
    std::string scheduling_parent = "-";
};
std::vector<omp_task_row> omp_task_rows(session& s);

enum class icv_scope { address_space, thread, parallel, task };

/// One ICV of `omp icvs`.
struct omp_icv_row {
    std::string name;
    std::string scope;                  ///< OMPD's scope name ("address_space", "implicit_task"...)
    std::string value;                  ///< as text
    std::optional<std::int64_t> number; ///< when the value is a number
};
/// The ICVs of the selected thread at scope `only`, or at every scope. Throws "Thread N (LWP
/// L) is not an OpenMP thread." when the selected thread is none (unless only the address
/// space's are asked for).
std::vector<omp_icv_row> omp_icv_rows(session& s, std::optional<icv_scope> only);

/// One thread's part of `omp bt`: the frames of its stack to show, the OpenMP runtime's
/// frames folded away.
struct omp_bt_segment {
    pid_t tid = 0;
    struct frame {
        std::size_t index = 0;   ///< in the thread's stack (session::stack), its frame number
        /// "#pragma omp parallel" / "#pragma omp task" when the frame runs an outlined
        /// function of the thread's tasks; empty for an ordinary frame.
        std::string construct;
        std::string location;    ///< of the construct's function: "omp_nested.c:14", "" when unknown
    };
    std::vector<frame> frames;
};

/// The selected thread's stack with the runtime's frames folded (`omp bt`), and with
/// `continued` its continuation in the threads that encountered the enclosing constructs
/// (gdb's `ompd bt on continued`), one segment per thread. Throws "Thread N (LWP L) is not
/// an OpenMP thread." when the selected thread is none.
std::vector<omp_bt_segment> omp_folded_stack(session& s, bool continued);

}  // namespace ompdbg::debugger
