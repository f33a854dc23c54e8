#pragma once
// The entry points of libompd (OpenMP 5.1 §20.5, omp-tools.h), resolved up front from one
// list so that a library missing any of them is rejected by name before it is initialised.

#include <omp-tools.h>

#include <optional>
#include <string>

namespace ompdbg::plugins::internal {

// X(name): every function of the OMPD API the host calls.
#define OMPDBG_OMPD_ENTRY_POINTS(X)      \
    X(ompd_initialize)                   \
    X(ompd_get_api_version)              \
    X(ompd_get_version_string)           \
    X(ompd_finalize)                     \
    X(ompd_process_initialize)           \
    X(ompd_device_initialize)            \
    X(ompd_rel_address_space_handle)     \
    X(ompd_get_omp_version)              \
    X(ompd_get_omp_version_string)       \
    X(ompd_get_thread_in_parallel)       \
    X(ompd_get_thread_handle)            \
    X(ompd_rel_thread_handle)            \
    X(ompd_thread_handle_compare)        \
    X(ompd_get_thread_id)                \
    X(ompd_get_curr_parallel_handle)     \
    X(ompd_get_enclosing_parallel_handle) \
    X(ompd_get_task_parallel_handle)     \
    X(ompd_rel_parallel_handle)          \
    X(ompd_parallel_handle_compare)      \
    X(ompd_get_curr_task_handle)         \
    X(ompd_get_generating_task_handle)   \
    X(ompd_get_scheduling_task_handle)   \
    X(ompd_get_task_in_parallel)         \
    X(ompd_rel_task_handle)              \
    X(ompd_task_handle_compare)          \
    X(ompd_get_task_function)            \
    X(ompd_get_task_frame)               \
    X(ompd_enumerate_states)             \
    X(ompd_get_state)                    \
    X(ompd_get_display_control_vars)     \
    X(ompd_rel_display_control_vars)     \
    X(ompd_enumerate_icvs)               \
    X(ompd_get_icv_from_scope)           \
    X(ompd_get_icv_string_from_scope)    \
    X(ompd_get_tool_data)

/// One function pointer per entry point, typed from omp-tools.h.
struct ompd_api {
#define OMPDBG_OMPD_SLOT(name) decltype(&::name) name = nullptr;
    OMPDBG_OMPD_ENTRY_POINTS(OMPDBG_OMPD_SLOT)
#undef OMPDBG_OMPD_SLOT

    /// Stores lookup(name) in every slot; returns the first name lookup cannot find.
    template <typename Lookup>
    std::optional<std::string> resolve(Lookup&& lookup) {
        std::optional<std::string> missing;
#define OMPDBG_OMPD_RESOLVE(name)                                    \
    name = reinterpret_cast<decltype(&::name)>(lookup(#name));       \
    if (name == nullptr && !missing) {                               \
        missing = #name;                                             \
    }
        OMPDBG_OMPD_ENTRY_POINTS(OMPDBG_OMPD_RESOLVE)
#undef OMPDBG_OMPD_RESOLVE
        return missing;
    }
};

}  // namespace ompdbg::plugins::internal
