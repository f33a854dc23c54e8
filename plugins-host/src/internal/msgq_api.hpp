#pragma once
// The entry points of a message-queue DLL, resolved up front from one list so that a DLL
// missing any of them is rejected by name before it is used.

#include <optional>
#include <string>

#include "internal/mqs_interface.hpp"

namespace ompdbg::plugins::internal {

// X(name): every function of the DLL the host calls.
#define OMPDBG_MQS_ENTRY_POINTS(X)     \
    X(mqs_setup_basic_callbacks)       \
    X(mqs_version_string)              \
    X(mqs_version_compatibility)       \
    X(mqs_dll_taddr_width)             \
    X(mqs_dll_error_string)            \
    X(mqs_setup_image)                 \
    X(mqs_image_has_queues)            \
    X(mqs_destroy_image_info)          \
    X(mqs_setup_process)               \
    X(mqs_destroy_process_info)        \
    X(mqs_process_has_queues)          \
    X(mqs_update_communicator_list)    \
    X(mqs_setup_communicator_iterator) \
    X(mqs_get_communicator)            \
    X(mqs_get_comm_group)              \
    X(mqs_next_communicator)           \
    X(mqs_setup_operation_iterator)    \
    X(mqs_next_operation)

/// One function pointer per entry point, typed from mqs_interface.hpp.
struct msgq_api {
#define OMPDBG_MQS_SLOT(name) decltype(&::name) name = nullptr;
    OMPDBG_MQS_ENTRY_POINTS(OMPDBG_MQS_SLOT)
#undef OMPDBG_MQS_SLOT

    /// Stores lookup(name) in every slot; returns the first name lookup cannot find.
    template <typename Lookup>
    std::optional<std::string> resolve(Lookup&& lookup) {
        std::optional<std::string> missing;
#define OMPDBG_MQS_RESOLVE(name)                                 \
    name = reinterpret_cast<decltype(&::name)>(lookup(#name));   \
    if (name == nullptr && !missing) {                           \
        missing = #name;                                         \
    }
        OMPDBG_MQS_ENTRY_POINTS(OMPDBG_MQS_RESOLVE)
#undef OMPDBG_MQS_RESOLVE
        return missing;
    }
};

}  // namespace ompdbg::plugins::internal
