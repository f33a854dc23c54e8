// One target seen through libompd (OpenMP 5.1 §20.5.2 onwards): handles wrapped with RAII,
// every ompd_rc_t checked, symbol lookup and TLS on libtracer + libdwarfview.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "internal/ompd_api.hpp"
#include "internal/ompd_contexts.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins {

namespace {

[[noreturn]] void fail(const char* fn, int rc) {
    error::send(std::string(fn) + " failed: " + ompd_rc_name(rc));
}

template <typename H, typename Rel>
std::shared_ptr<H> own(H* h, Rel rel) {
    return std::shared_ptr<H>(h, [rel](H* p) {
        if (p != nullptr) {
            rel(p);
        }
    });
}

bool hint_matches(const tracer::loaded_module& m, const char* hint) {
    if (hint == nullptr || *hint == '\0') {
        return true;
    }
    std::string h(hint);
    std::string path = m.path.string();
    std::string base = m.path.filename().string();
    return base == h || path == h || (path.size() > h.size() && path.ends_with("/" + h)) ||
           base.rfind(h, 0) == 0;  // "libomp.so" matches "libomp.so.5"
}

}  // namespace

ompd_rc_t ompd_address_space::impl::lookup_symbol(const char* name, const char* file_hint,
                                                  std::optional<pid_t> tid,
                                                  std::uint64_t& out) noexcept {
    try {
        const auto& mods = tgt->modules();
        if (mods.size() != modules_seen) {
            symbol_cache.clear();
            tls_symbol_cache.clear();
            tls_cache.clear();
            modules_seen = mods.size();
        }
        std::string key = std::string(file_hint ? file_hint : "") + "|" + name;
        if (auto it = tls_symbol_cache.find(key); it != tls_symbol_cache.end()) {
            return thread_local_symbol(tid, it->second.first, it->second.second, out);
        }
        if (auto it = symbol_cache.find(key); it != symbol_cache.end()) {
            if (!it->second) {
                return ompd_rc_error;
            }
            out = *it->second;
            return ompd_rc_ok;
        }
        std::optional<std::uint64_t> found;
        for (std::size_t i = 0; i < mods.size() && !found; ++i) {
            const auto& m = mods[i];
            auto elf = internal::elf_of(m);
            if (!elf || !hint_matches(m, file_hint)) {
                continue;
            }
            for (const auto& s : elf->find_symbols(name)) {
                if (s.kind == dwarf::symbol_kind::tls) {
                    // Offset 0 is a real TLS offset (__kmp_gtid); an import has no PT_TLS.
                    if (!elf->tls()) {
                        continue;
                    }
                    tls_symbol_cache[key] = {i, s.value};
                    return thread_local_symbol(tid, i, s.value, out);
                }
                if (s.value != 0) {
                    found = m.to_runtime(s.value).addr();
                    break;
                }
            }
        }
        symbol_cache[key] = found;
        if (!found) {
            log::write(log::channel::plugin, "symbol_addr_lookup: {} not found{}", name,
                       file_hint ? std::string(" in ") + file_hint : std::string());
            return ompd_rc_error;
        }
        out = *found;
        return ompd_rc_ok;
    } catch (...) {
        return ompd_rc_error;
    }
}

ompd_rc_t ompd_address_space::impl::thread_local_symbol(std::optional<pid_t> tid,
                                                        std::size_t module_index,
                                                        std::uint64_t offset,
                                                        std::uint64_t& out) noexcept {
    try {
        // A thread-local variable needs a thread; without one, the current thread of the
        // target (the first) is what a debugger's "&var" would answer.
        pid_t t = 0;
        if (tid) {
            t = *tid;
        } else {
            auto ths = tgt->threads();
            if (ths.empty()) {
                return ompd_rc_unavailable;
            }
            t = ths.front()->tid();
        }
        if (std::uint64_t r = tgt->resume_count(); r != tls_cache_resumes) {
            tls_cache.clear();
            tls_cache_resumes = r;
        }
        auto key = std::make_tuple(t, module_index, offset);
        if (auto it = tls_cache.find(key); it != tls_cache.end()) {
            out = it->second;
            return ompd_rc_ok;
        }
        auto a = tls_address(t, tgt->modules().at(module_index), offset);
        if (!a) {
            return ompd_rc_unavailable;
        }
        tls_cache.emplace(key, *a);
        out = *a;
        return ompd_rc_ok;
    } catch (...) {
        return ompd_rc_error;
    }
}

std::optional<std::uint64_t> ompd_address_space::impl::tls_address(pid_t tid,
                                                                   const tracer::loaded_module& m,
                                                                   std::uint64_t offset) noexcept {
    try {
        if (tls) {
            if (auto a = tls(tid, m, offset)) {
                return a;
            }
        }
        // Without libthread_db: glibc's x86-64 TCB is at fs_base, its dtv pointer at +8,
        // and dtv[modid] (16-byte entries after the generation slot) points at the block.
        std::uint64_t modid = m.tls_modid;
        if (modid == 0) {
            // ld.so numbers TLS modules in link-map order (the executable first), so the
            // module's index among the modules that have a PT_TLS segment is its id.
            for (const auto& other : tgt->modules()) {
                auto oe = internal::elf_of(other);
                if (oe && oe->tls()) {
                    ++modid;
                }
                if (other.path == m.path && other.load_bias == m.load_bias) {
                    break;
                }
            }
        }
        if (modid == 0) {
            return std::nullopt;
        }
        tracer::thread* th = tgt->find_thread(tid);
        if (th == nullptr) {
            return std::nullopt;
        }
        std::uint64_t fs_base = th->regs().gp().fs_base;
        auto dtv = tgt->read<std::uint64_t>(virt_addr(fs_base + 8));
        auto block = tgt->read<std::uint64_t>(virt_addr(dtv + 16 * modid));
        if (block == 0 || block == ~std::uint64_t{0}) {
            return std::nullopt;
        }
        return block + offset;
    } catch (...) {
        return std::nullopt;
    }
}

ompd_address_space::ompd_address_space(std::shared_ptr<ompd_library> lib, tracer::target& tgt,
                                       tls_resolver tls)
    : lib_(std::move(lib)), tgt_(tgt), impl_(std::make_unique<impl>()) {
    impl_->self = this;
    impl_->tgt = &tgt;
    impl_->tls = std::move(tls);
    impl_->context = internal::new_aspace_context(this);
    ompd_address_space_handle_t* h = nullptr;
    int rc = lib_->api().ompd_process_initialize(impl_->context, &h);
    if (rc != ompd_rc_ok) {
        internal::retire_aspace_context(impl_->context);
        fail("ompd_process_initialize", rc);
    }
    impl_->handle = h;
}

ompd_address_space::~ompd_address_space() {
    if (impl_->handle != nullptr) {
        lib_->api().ompd_rel_address_space_handle(impl_->handle);
    }
    internal::retire_aspace_context(impl_->context);
}

void ompd_address_space::invalidate() {
    // Thread contexts stay (they are keyed by LWP); handles made before a resume are the
    // caller's to drop. Nothing cached here depends on the running state except modules.
}

std::optional<omp_thread> ompd_address_space::thread_of(pid_t tid) {
    const auto& api = lib_->api();
    std::int64_t lwp = tid;
    ompd_thread_handle_t* h = nullptr;
    int rc = api.ompd_get_thread_handle(impl_->handle, 1 /* LWP */, sizeof lwp, &lwp, &h);
    if (rc == ompd_rc_unavailable || rc == ompd_rc_bad_input) {
        return std::nullopt;
    }
    if (rc != ompd_rc_ok) {
        fail("ompd_get_thread_handle", rc);
    }
    return omp_thread{own(h, api.ompd_rel_thread_handle)};
}

std::optional<pid_t> ompd_address_space::os_thread_of(const omp_thread& t) {
    std::uint64_t pthread = 0;
    int rc = lib_->api().ompd_get_thread_id(t.handle.get(), 0 /* pthread */, sizeof pthread, &pthread);
    if (rc != ompd_rc_ok) {
        return std::nullopt;
    }
    for (tracer::thread* th : tgt_.threads()) {
        try {
            if (th->state() != tracer::thread_state::exited && th->regs().gp().fs_base == pthread) {
                return th->tid();
            }
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

std::pair<std::int64_t, std::uint64_t> ompd_address_space::state(const omp_thread& t) {
    ompd_word_t st = 0;
    ompd_wait_id_t wait = 0;
    if (int rc = lib_->api().ompd_get_state(t.handle.get(), &st, &wait); rc != ompd_rc_ok) {
        fail("ompd_get_state", rc);
    }
    return {st, wait};
}

std::string ompd_address_space::state_name(std::int64_t state) {
    if (!impl_->states) {
        impl_->states.emplace();
        // ompt_state_undefined (0x102) is where the enumeration starts (§20.5.8.1).
        ompd_word_t current = 0x102;
        for (int guard = 0; guard < 256; ++guard) {
            ompd_word_t next = 0;
            const char* name = nullptr;
            ompd_word_t more = 0;
            int rc = lib_->api().ompd_enumerate_states(impl_->handle, current, &next, &name, &more);
            if (rc != ompd_rc_ok) {
                break;
            }
            impl_->states->emplace_back(next, name ? name : "");
            std::free(const_cast<char*>(name));  // allocated through our alloc_memory
            current = next;
            if (!more) {
                break;
            }
        }
    }
    for (const auto& [v, n] : *impl_->states) {
        if (v == state) {
            return n;
        }
    }
    return fmt::format("state {:#x}", state);
}

std::optional<omp_parallel> ompd_address_space::current_parallel(const omp_thread& t) {
    ompd_parallel_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_curr_parallel_handle(t.handle.get(), &h);
    // unsupported: libompd read a null team pointer (a thread between teams).
    if (rc == ompd_rc_unavailable || rc == ompd_rc_unsupported) {
        return std::nullopt;
    }
    if (rc != ompd_rc_ok) {
        fail("ompd_get_curr_parallel_handle", rc);
    }
    return omp_parallel{own(h, lib_->api().ompd_rel_parallel_handle)};
}

std::optional<omp_task> ompd_address_space::current_task(const omp_thread& t) {
    ompd_task_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_curr_task_handle(t.handle.get(), &h);
    if (rc == ompd_rc_unavailable || rc == ompd_rc_unsupported) {
        return std::nullopt;
    }
    if (rc != ompd_rc_ok) {
        fail("ompd_get_curr_task_handle", rc);
    }
    return omp_task{own(h, lib_->api().ompd_rel_task_handle)};
}

std::optional<omp_parallel> ompd_address_space::enclosing_parallel(const omp_parallel& p) {
    ompd_parallel_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_enclosing_parallel_handle(p.handle.get(), &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;  // unavailable: the outermost region
    }
    return omp_parallel{own(h, lib_->api().ompd_rel_parallel_handle)};
}

std::optional<omp_thread> ompd_address_space::thread_in_parallel(const omp_parallel& p, int n) {
    ompd_thread_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_thread_in_parallel(p.handle.get(), n, &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;
    }
    return omp_thread{own(h, lib_->api().ompd_rel_thread_handle)};
}

std::optional<omp_task> ompd_address_space::task_in_parallel(const omp_parallel& p, int n) {
    ompd_task_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_task_in_parallel(p.handle.get(), n, &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;
    }
    return omp_task{own(h, lib_->api().ompd_rel_task_handle)};
}

bool ompd_address_space::same(const omp_parallel& a, const omp_parallel& b) {
    int cmp = 1;
    return lib_->api().ompd_parallel_handle_compare(a.handle.get(), b.handle.get(), &cmp) == ompd_rc_ok &&
           cmp == 0;
}

bool ompd_address_space::same(const omp_task& a, const omp_task& b) {
    int cmp = 1;
    return lib_->api().ompd_task_handle_compare(a.handle.get(), b.handle.get(), &cmp) == ompd_rc_ok &&
           cmp == 0;
}

bool ompd_address_space::same(const omp_thread& a, const omp_thread& b) {
    int cmp = 1;
    return lib_->api().ompd_thread_handle_compare(a.handle.get(), b.handle.get(), &cmp) == ompd_rc_ok &&
           cmp == 0;
}

std::optional<omp_task> ompd_address_space::generating_task(const omp_task& t) {
    ompd_task_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_generating_task_handle(t.handle.get(), &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;
    }
    return omp_task{own(h, lib_->api().ompd_rel_task_handle)};
}

std::optional<omp_task> ompd_address_space::scheduling_task(const omp_task& t) {
    ompd_task_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_scheduling_task_handle(t.handle.get(), &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;
    }
    return omp_task{own(h, lib_->api().ompd_rel_task_handle)};
}

std::optional<omp_parallel> ompd_address_space::task_parallel(const omp_task& t) {
    ompd_parallel_handle_t* h = nullptr;
    int rc = lib_->api().ompd_get_task_parallel_handle(t.handle.get(), &h);
    if (rc != ompd_rc_ok || h == nullptr) {
        return std::nullopt;
    }
    return omp_parallel{own(h, lib_->api().ompd_rel_parallel_handle)};
}

std::optional<std::uint64_t> ompd_address_space::task_function(const omp_task& t) {
    ompd_address_t a{};
    if (lib_->api().ompd_get_task_function(t.handle.get(), &a) != ompd_rc_ok) {
        return std::nullopt;
    }
    return a.address;
}

std::optional<omp_task_frame> ompd_address_space::task_frame(const omp_task& t) {
    ompd_frame_info_t exit{}, enter{};
    if (lib_->api().ompd_get_task_frame(t.handle.get(), &exit, &enter) != ompd_rc_ok) {
        return std::nullopt;
    }
    return omp_task_frame{exit.frame_address.address, enter.frame_address.address, exit.frame_flag,
                          enter.frame_flag};
}

const std::vector<omp_icv>& ompd_address_space::icvs() {
    if (!impl_->icvs) {
        impl_->icvs.emplace();
        ompd_icv_id_t current = 0;  // ompd_icv_undefined starts the enumeration
        for (int guard = 0; guard < 256; ++guard) {
            ompd_icv_id_t next = 0;
            const char* name = nullptr;
            ompd_scope_t scope{};
            int more = 0;
            int rc = lib_->api().ompd_enumerate_icvs(impl_->handle, current, &next, &name, &scope, &more);
            if (rc != ompd_rc_ok) {
                break;
            }
            // The library's scope as the integer it wrote: a value outside ompd_scope_t
            // must not be loaded as one (undefined behaviour), and an ICV of no known scope
            // cannot be asked for.
            std::underlying_type_t<ompd_scope_t> raw_scope = 0;
            std::memcpy(&raw_scope, &scope, sizeof raw_scope);
            if (raw_scope >= ompd_scope_global && raw_scope <= ompd_scope_task) {
                impl_->icvs->push_back(omp_icv{next, name ? name : "", static_cast<omp_scope>(raw_scope)});
            }
            std::free(const_cast<char*>(name));  // allocated through our alloc_memory
            current = next;
            if (!more) {
                break;
            }
        }
    }
    return *impl_->icvs;
}

std::optional<omp_icv> ompd_address_space::find_icv(std::string_view name) {
    for (const auto& i : icvs()) {
        if (i.name == name) {
            return i;
        }
    }
    return std::nullopt;
}

namespace {

omp_icv_value read_icv(const internal::ompd_api& api, void* handle, const omp_icv& icv) {
    omp_icv_value v;
    ompd_word_t n = 0;
    auto scope = static_cast<ompd_scope_t>(icv.scope);
    v.rc = api.ompd_get_icv_from_scope(handle, scope, icv.id, &n);
    if (v.rc == ompd_rc_ok) {
        v.number = n;
        return v;
    }
    const char* s = nullptr;
    int rc = api.ompd_get_icv_string_from_scope(handle, scope, icv.id, &s);
    if (rc == ompd_rc_ok && s != nullptr) {
        v.text = s;
        v.rc = rc;
        // The string was allocated with our alloc_memory (§20.5.10.3): free it.
        std::free(const_cast<char*>(s));
    }
    return v;
}

}  // namespace

std::string omp_icv_value::to_string() const {
    if (number) {
        return std::to_string(*number);
    }
    if (text) {
        return *text;
    }
    return "<" + ompd_rc_name(rc) + ">";
}

omp_icv_value ompd_address_space::icv(const omp_icv& i) {
    return read_icv(lib_->api(), impl_->handle, i);
}
omp_icv_value ompd_address_space::icv(const omp_thread& t, const omp_icv& i) {
    return read_icv(lib_->api(), t.handle.get(), i);
}
omp_icv_value ompd_address_space::icv(const omp_parallel& p, const omp_icv& i) {
    return read_icv(lib_->api(), p.handle.get(), i);
}
omp_icv_value ompd_address_space::icv(const omp_task& t, const omp_icv& i) {
    return read_icv(lib_->api(), t.handle.get(), i);
}

void* ompd_address_space::context_for_testing() {
    return impl_->context;
}

const void* ompd_address_space::callbacks_for_testing() {
    return &internal::ompd_callback_table();
}

int ompd_address_space::initialize_device(std::uint64_t kind, std::uint64_t id) {
    ompd_address_space_handle_t* device = nullptr;
    int rc = lib_->api().ompd_device_initialize(impl_->handle, impl_->context, kind, sizeof id, &id, &device);
    if (rc == ompd_rc_ok && device != nullptr) {
        lib_->api().ompd_rel_address_space_handle(device);
    }
    return rc;
}

std::optional<std::int64_t> ompd_address_space::omp_version() {
    ompd_word_t v = 0;
    if (lib_->api().ompd_get_omp_version(impl_->handle, &v) != ompd_rc_ok) {
        return std::nullopt;
    }
    return v;
}

}  // namespace ompdbg::plugins
