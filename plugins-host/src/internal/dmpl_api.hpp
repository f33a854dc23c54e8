#pragma once
// The entry points of a DMPL library (dmpl.h), resolved up front so that a library missing
// one is rejected by name before it is initialised, and the host's DMPL_process_t /
// DMPL_thread_t handles.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"

namespace ompdbg::plugins::internal {

// X(name): every function of dmpl.h the host calls, except the initialiser (two spellings).
#define OMPDBG_DMPL_ENTRY_POINTS(X) \
    X(DMPL_version_compatibility)   \
    X(DMPL_version_string)          \
    X(DMPL_error_string)            \
    X(DMPL_destroy_process_info)    \
    X(DMPL_destroy_thread_info)     \
    X(DMPL_demangle_name)           \
    X(DMPL_get_tls_address)         \
    X(DMPL_get_rtl_names)

struct dmpl_api {
    decltype(&::DMPL_initialise) initialise = nullptr;
#define OMPDBG_DMPL_SLOT(name) decltype(&::name) name = nullptr;
    OMPDBG_DMPL_ENTRY_POINTS(OMPDBG_DMPL_SLOT)
#undef OMPDBG_DMPL_SLOT
    /// Optional (dmpl.h, 6.): null when the library does not export it.
    decltype(&::DMPL_ompdbg_reduction_routines) ompdbg_reduction_routines = nullptr;

    /// Stores lookup(name) in every slot; returns the first name lookup cannot find.
    template <typename Lookup>
    std::optional<std::string> resolve(Lookup&& lookup) {
        initialise = reinterpret_cast<decltype(&::DMPL_initialise)>(lookup("DMPL_initialise"));
        if (initialise == nullptr) {
            initialise = reinterpret_cast<decltype(&::DMPL_initialise)>(lookup("DMPL_initialize"));
        }
        std::optional<std::string> missing;
        if (initialise == nullptr) {
            missing = "DMPL_initialise (or DMPL_initialize)";
        }
#define OMPDBG_DMPL_RESOLVE(name)                                \
    name = reinterpret_cast<decltype(&::name)>(lookup(#name));   \
    if (name == nullptr && !missing) {                           \
        missing = #name;                                         \
    }
        OMPDBG_DMPL_ENTRY_POINTS(OMPDBG_DMPL_RESOLVE)
#undef OMPDBG_DMPL_RESOLVE
        ompdbg_reduction_routines = reinterpret_cast<decltype(&::DMPL_ompdbg_reduction_routines)>(
            lookup("DMPL_ompdbg_reduction_routines"));
        return missing;
    }
};

/// The host's callback table (static, all 17 slots filled).
const DMPL_callbacks_t& dmpl_callback_table();

}  // namespace ompdbg::plugins::internal

inline constexpr std::uint64_t dmpl_process_magic = 0x646d706c'50524f43ULL;
inline constexpr std::uint64_t dmpl_thread_magic = 0x646d706c'54485244ULL;

struct _DMPL_process_t {
    std::uint64_t magic = dmpl_process_magic;
    ompdbg::plugins::dmpl_process::impl* owner = nullptr;
    DMPL_process_info_t* info = nullptr;
};

struct _DMPL_thread_t {
    std::uint64_t magic = dmpl_thread_magic;
    _DMPL_process_t* process = nullptr;
    pid_t tid = 0;
    DMPL_thread_info_t* info = nullptr;
};

/// A type find_type handed out; lives as long as its process.
struct _DMPL_type_t {
    ompdbg::dwarf::type type;
};

struct ompdbg::plugins::dmpl_process::impl {
    dmpl_process* self = nullptr;
    tracer::target* tgt = nullptr;
    pthread_key_reader keys;
    std::unique_ptr<_DMPL_process_t> process;
    std::map<pid_t, std::unique_ptr<_DMPL_thread_t>> threads;
    std::vector<std::unique_ptr<_DMPL_type_t>> types;

    _DMPL_thread_t* thread(pid_t tid);
};

namespace ompdbg::plugins::internal {
/// The live process behind a handle a library passed us, or nullptr (never dereferences a
/// pointer that is not one of ours).
dmpl_process::impl* checked_process(const DMPL_process_t* p);
/// The live thread handle, or nullptr.
_DMPL_thread_t* checked_thread(const DMPL_thread_t* t);
void register_dmpl_process(_DMPL_process_t* p);
void unregister_dmpl_process(_DMPL_process_t* p);
}  // namespace ompdbg::plugins::internal
