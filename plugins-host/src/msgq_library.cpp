// Finding and loading a message-queue DLL: the names the MPI library publishes in the
// process (mpimsgq_dll_locations, then MPIR_dll_name), the plugin policy, the entry-point
// table, the version and bitness checks, and the one-time mqs_setup_basic_callbacks.

#include "internal/msgq_api.hpp"
#include "internal/msgq_contexts.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/plugins/msgq.hpp"

namespace fs = std::filesystem;

namespace ompdbg::plugins {

namespace {

// The NULL-terminated char* array at `array` (at most 64 entries, each at most 4096 bytes).
std::vector<std::string> read_string_array(tracer::target& tgt, std::uint64_t array) {
    std::vector<std::string> out;
    for (int i = 0; i < 64; ++i) {
        std::uint64_t p = 0;
        auto bytes = std::as_writable_bytes(std::span(&p, 1));
        if (tgt.try_read_memory(virt_addr(array + 8 * i), bytes) != bytes.size() || p == 0) {
            break;
        }
        try {
            out.push_back(tgt.read_string(virt_addr(p)));
        } catch (const std::exception&) {
            break;
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> msgq_dll_candidates::in_order() const {
    std::vector<std::string> all = locations;
    if (dll_name && std::find(all.begin(), all.end(), *dll_name) == all.end()) {
        all.push_back(*dll_name);
    }
    return all;
}

msgq_dll_candidates find_msgq_dll_candidates(tracer::target& tgt) {
    msgq_dll_candidates c;
    if (auto addr = internal::find_symbol_address(tgt, "mpimsgq_dll_locations")) {
        c.has_locations_symbol = true;
        std::uint64_t array = 0;
        auto bytes = std::as_writable_bytes(std::span(&array, 1));
        if (tgt.try_read_memory(virt_addr(*addr), bytes) == bytes.size() && array != 0) {
            c.locations = read_string_array(tgt, array);
        }
    }
    if (auto addr = internal::find_symbol_address(tgt, "MPIR_dll_name")) {
        c.has_dll_name_symbol = true;
        try {
            std::string name = tgt.read_string(virt_addr(*addr));
            if (!name.empty()) {
                c.dll_name = std::move(name);
            }
        } catch (const std::exception&) {
        }
    }
    return c;
}

std::shared_ptr<msgq_library> msgq_library::load(const fs::path& file, const plugin_policy& policy) {
    // One instance per file, as for OMPD and DMPL libraries: the DLL keeps the debugger's
    // basic callback table in a global, set once below.
    return load_once<msgq_library>(file, [&] {
        std::shared_ptr<msgq_library> lib(new msgq_library);
        lib->api_ = std::make_unique<internal::msgq_api>();
        lib->lib_ = plugin_library::open_api(file, policy, *lib->api_, "a message-queue DLL");
        internal::msgq_dll_loaded();   // paired with the destructor's msgq_dll_unloaded()
        const auto& api = *lib->api_;
        lib->compatibility_ = api.mqs_version_compatibility();
        lib->taddr_width_ = api.mqs_dll_taddr_width();
        if (char* v = api.mqs_version_string()) {
            lib->version_string_ = v;
        }
        if (lib->compatibility_ != msgq_interface_compatibility) {
            error::send(fmt::format("{}: message-queue interface version {} (this debugger implements {})",
                                    file.string(), lib->compatibility_, msgq_interface_compatibility));
        }
        if (lib->taddr_width_ != static_cast<int>(sizeof(mqs_taddr_t))) {
            error::send(fmt::format("{}: a {}-bit message-queue DLL cannot read a 64-bit process", file.string(),
                                    lib->taddr_width_ * 8));
        }
        api.mqs_setup_basic_callbacks(&internal::msgq_basic_callback_table());
        log::write(log::channel::plugin, "message-queue DLL {}: {} (interface {})", file.string(),
                   lib->version_string_, lib->compatibility_);
        return lib;
    });
}

std::shared_ptr<msgq_library> msgq_library::load_for(tracer::target& tgt, const plugin_policy& policy) {
    msgq_dll_candidates c = find_msgq_dll_candidates(tgt);
    auto names = c.in_order();
    if (names.empty()) {
        if (!c.has_locations_symbol && !c.has_dll_name_symbol) {
            error::send(fmt::format("Process {} names no MPI message-queue DLL (neither "
                                    "mpimsgq_dll_locations nor MPIR_dll_name is defined): "
                                    "not an MPI program, or its MPI library has no "
                                    "message-queue support",
                                    tgt.pid()));
        }
        error::send(fmt::format("Process {} names no MPI message-queue DLL yet "
                                "(mpimsgq_dll_locations is NULL and MPIR_dll_name is empty: "
                                "MPI_Init has not run?)",
                                tgt.pid()));
    }
    std::string reasons;
    for (const auto& name : names) {
        try {
            return load(name, policy);
        } catch (const std::exception& e) {
            log::write(log::channel::plugin, "message-queue DLL candidate {}: {}", name, e.what());
            reasons += reasons.empty() ? "" : "; ";
            reasons += e.what();
        }
    }
    error::send("No usable MPI message-queue DLL: " + reasons);
}

// The DLL is closed before its leftover blocks are given back (msgq_dll_unloaded).
msgq_library::~msgq_library() {
    const bool opened = lib_ != nullptr;
    lib_.reset();
    if (opened) {
        internal::msgq_dll_unloaded();
    }
}

std::string msgq_library::error_string(int code) const {
    if (api_ && api_->mqs_dll_error_string != nullptr) {
        if (char* s = api_->mqs_dll_error_string(code); s != nullptr && *s != '\0') {
            return s;
        }
    }
    return fmt::format("error {}", code);
}

std::string to_string(msgq_status s) {
    switch (s) {
    case msgq_status::pending: return "pending";
    case msgq_status::matched: return "matched";
    case msgq_status::complete: return "complete";
    }
    return "unknown";
}

}  // namespace ompdbg::plugins
