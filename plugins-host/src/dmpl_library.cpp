// Loading a DMPL library (dmpl.h: DMPL_initialise/DMPL_initialize, versioning) and calling
// its entry points for one target (dmpl_process).

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "internal/dmpl_api.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins {

namespace fs = std::filesystem;

std::string dmpl_rc_name(int rc) {
    switch (rc) {
        case DMPL_ok: return "DMPL_ok";
        case DMPL_tls_unallocated: return "DMPL_tls_unallocated";
        case DMPL_name_too_long: return "DMPL_name_too_long";
        case DMPL_name_unchanged: return "DMPL_name_unchanged";
        case DMPL_tls_native: return "DMPL_tls_native";
        case DMPL_name_internal: return "DMPL_name_internal";
        default: return "DMPL code " + std::to_string(rc);
    }
}

std::string dmpl_varinfo_name(int varinfo) {
    switch (varinfo & ~DMPL_varinfo_needs_dereference) {
        case DMPL_varinfo_private: return "private";
        case DMPL_varinfo_shared: return "shared";
        case DMPL_varinfo_firstprivate: return "firstprivate";
        case DMPL_varinfo_lastprivate: return "lastprivate";
        case DMPL_varinfo_firstlastprivate: return "firstprivate lastprivate";
        case DMPL_varinfo_reduction: return "reduction";
        case DMPL_varinfo_threadprivate: return "threadprivate";
        case DMPL_varinfo_threadshared: return "threadshared";
        case DMPL_varinfo_copyin: return "copyin";
        default: return {};
    }
}

dmpl_library::dmpl_library() = default;
dmpl_library::~dmpl_library() = default;

const fs::path& dmpl_library::path() const {
    return lib_->path();
}

std::shared_ptr<dmpl_library> dmpl_library::load(const fs::path& file, const plugin_policy& policy) {
    // A DMPL library may keep its callback table in a global (the paper's Fig. 10 does).
    return load_once<dmpl_library>(file, [&] { return load_new(file, policy); });
}

std::shared_ptr<dmpl_library> dmpl_library::load_new(const fs::path& file, const plugin_policy& policy) {
    std::shared_ptr<dmpl_library> lib(new dmpl_library());
    lib->api_ = std::make_unique<internal::dmpl_api>();
    lib->lib_ = plugin_library::open_api(file, policy, *lib->api_, "a DMPL library");
    const std::string where = lib->path().string();
    lib->initialiser_ = lib->lib_->find("DMPL_initialise") != nullptr ? "DMPL_initialise" : "DMPL_initialize";
    const auto& api = *lib->api_;
    lib->compatibility_ = api.DMPL_version_compatibility();
    if (lib->compatibility_ != XLD_INTERFACE_COMPATIBILITY) {
        error::send(where + ": DMPL interface version " + std::to_string(lib->compatibility_) +
                    " is not supported (ompdbg implements version " +
                    std::to_string(XLD_INTERFACE_COMPATIBILITY) + ")");
    }
    if (const char* vs = api.DMPL_version_string()) {
        lib->version_string_ = vs;
    }
    if (int rc = api.initialise(&internal::dmpl_callback_table()); rc != DMPL_ok) {
        error::send(where + ": " + lib->initialiser_ + " failed: " + lib->error_string(rc));
    }
    log::write(log::channel::plugin, "DMPL {} (interface {}) from {}", lib->version_string_,
               lib->compatibility_, where);
    return lib;
}

std::string dmpl_library::error_string(int rc) const {
    const char* s = nullptr;
    try {
        s = api_->DMPL_error_string(rc);
    } catch (...) {
        s = nullptr;
    }
    std::string name = dmpl_rc_name(rc);
    if (s == nullptr || *s == '\0') {
        return rc == DMPL_ok || rc == DMPL_tls_unallocated || rc == DMPL_name_too_long ||
                       rc == DMPL_name_unchanged || rc == DMPL_tls_native || rc == DMPL_name_internal
                   ? name
                   : "unknown " + name + " (the DMPL library does not name it)";
    }
    return std::string(s, strnlen(s, 512));
}

std::optional<dmpl_rtl_names> dmpl_library::rtl_names(int language) const {
    const DMPL_rtl_names* n = api_->DMPL_get_rtl_names(language);
    if (n == nullptr || (n->main_task_dispatcher == nullptr && n->microtask_invoker == nullptr)) {
        return std::nullopt;
    }
    dmpl_rtl_names out;
    if (n->main_task_dispatcher != nullptr) {
        out.main_task_dispatcher.assign(n->main_task_dispatcher, strnlen(n->main_task_dispatcher, 512));
    }
    if (n->microtask_invoker != nullptr) {
        out.microtask_invoker.assign(n->microtask_invoker, strnlen(n->microtask_invoker, 512));
    }
    return out;
}

std::vector<std::string> dmpl_library::reduction_routines(int language) const {
    std::vector<std::string> out;
    if (api_->ompdbg_reduction_routines == nullptr) {
        return out;
    }
    const char* const* names = api_->ompdbg_reduction_routines(language);
    // A list that never ends is a broken library: read at most 64 names.
    for (int i = 0; names != nullptr && i < 64 && names[i] != nullptr; ++i) {
        out.emplace_back(names[i], strnlen(names[i], 512));
    }
    return out;
}

dmpl_demangled dmpl_library::demangle(std::string_view mangled, int hints) const {
    dmpl_demangled out;
    out.name = std::string(mangled);
    std::string in(mangled);
    std::vector<char> buf(256);
    for (int attempt = 0; attempt < 2; ++attempt) {
        int res_len = 0;
        int flags = hints;
        int line = 0;
        buf.back() = '\0';
        int rc = api_->DMPL_demangle_name(in.c_str(), &res_len, buf.data(),
                                          static_cast<int>(buf.size()), &flags, &line);
        if (rc == DMPL_name_too_long && attempt == 0 && res_len > 0 && res_len < (1 << 20)) {
            buf.assign(static_cast<std::size_t>(res_len) + 1, '\0');
            continue;
        }
        out.rc = rc;
        if (rc == DMPL_ok) {
            buf.back() = '\0';
            out.name = buf.data();
            out.varinfo = flags & ~DMPL_hint_mask;
            out.decl_line = line;
        } else if (rc == DMPL_name_unchanged || rc == DMPL_name_internal) {
            out.varinfo = flags & ~DMPL_hint_mask;
            out.decl_line = line;
        }
        return out;
    }
    out.rc = DMPL_name_too_long;
    return out;
}

// ---- dmpl_process -------------------------------------------------------------------

_DMPL_thread_t* dmpl_process::impl::thread(pid_t tid) {
    auto& slot = threads[tid];
    if (!slot) {
        slot = std::make_unique<_DMPL_thread_t>();
        slot->process = process.get();
        slot->tid = tid;
    }
    return slot.get();
}

dmpl_process::dmpl_process(std::shared_ptr<dmpl_library> lib, tracer::target& tgt, pthread_key_reader keys)
    : lib_(std::move(lib)), tgt_(tgt), impl_(std::make_unique<impl>()) {
    impl_->self = this;
    impl_->tgt = &tgt_;
    impl_->keys = std::move(keys);
    impl_->process = std::make_unique<_DMPL_process_t>();
    impl_->process->owner = impl_.get();
    internal::register_dmpl_process(impl_->process.get());
}

dmpl_process::~dmpl_process() {
    const auto& api = lib_->api();
    for (auto& [tid, th] : impl_->threads) {
        if (th->info != nullptr) {
            api.DMPL_destroy_thread_info(th->info);
        }
    }
    if (impl_->process->info != nullptr) {
        api.DMPL_destroy_process_info(impl_->process->info);
    }
    internal::unregister_dmpl_process(impl_->process.get());
}

dmpl_tls_answer dmpl_process::tls_address(pid_t tid, std::uint64_t in_addr) {
    dmpl_tls_answer a;
    _DMPL_thread_t* th = impl_->thread(tid);
    DMPL_taddr_t out = 0;
    a.rc = lib_->api().DMPL_get_tls_address(th, in_addr, &out);
    if (a.rc == DMPL_ok) {
        a.address = out;
    } else if (a.rc != DMPL_tls_native) {
        a.message = "DMPL_get_tls_address: " + lib_->error_string(a.rc);
    }
    return a;
}

void dmpl_process::forget_exited_threads() {
    const auto& api = lib_->api();
    for (auto it = impl_->threads.begin(); it != impl_->threads.end();) {
        tracer::thread* t = tgt_.find_thread(it->first);
        if (t == nullptr || t->state() == tracer::thread_state::exited) {
            if (it->second->info != nullptr) {
                api.DMPL_destroy_thread_info(it->second->info);
            }
            it = impl_->threads.erase(it);
        } else {
            ++it;
        }
    }
}

void* dmpl_process::process_handle_for_testing() {
    return impl_->process.get();
}

void* dmpl_process::thread_handle_for_testing(pid_t tid) {
    return impl_->thread(tid);
}

const void* dmpl_process::callbacks_for_testing() {
    return &internal::dmpl_callback_table();
}

}  // namespace ompdbg::plugins
