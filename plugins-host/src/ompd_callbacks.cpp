// The callbacks libompd calls into the debugger (OpenMP 5.1 §20.4, ompd_callbacks_t). Each is
// noexcept, checks its arguments first and answers with the spec's codes: ompd_rc_bad_input
// for null/invalid arguments, ompd_rc_stale_handle for a context that is not (or no longer)
// ours, ompd_rc_error when the target cannot give what is asked.

#include <sys/user.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <vector>

#include "internal/live_registry.hpp"
#include "internal/ompd_contexts.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins::internal {

_ompd_thread_cont* thread_context_of(ompd_address_space::impl* as, pid_t tid);

namespace {

live_registry& contexts() {
    static live_registry r;
    return r;
}
std::mutex& registry_mutex() { return contexts().mutex(); }
std::vector<std::unique_ptr<_ompd_aspace_cont>>& all_contexts() {
    static std::vector<std::unique_ptr<_ompd_aspace_cont>> v;
    return v;
}

// Thread-id kinds of LLVM's libompd (omp-debug.h): pthread_t and Linux LWP.
constexpr ompd_thread_id_t thread_id_pthread = 0;
constexpr ompd_thread_id_t thread_id_lwp = 1;

ompd_address_space::impl* owner_of(ompd_address_space_context_t* ctx) {
    _ompd_aspace_cont* c = checked_context(ctx);
    if (c == nullptr || c->owner == nullptr) {
        return nullptr;
    }
    return &c->owner->internals();
}

// §20.4.1.1 alloc_memory: memory libompd owns (handles), freed through free_memory.
ompd_rc_t cb_alloc_memory(ompd_size_t nbytes, void** ptr) noexcept {
    if (ptr == nullptr) {
        return ompd_rc_bad_input;
    }
    *ptr = std::malloc(nbytes == 0 ? 1 : nbytes);
    return *ptr != nullptr ? ompd_rc_ok : ompd_rc_nomem;
}

ompd_rc_t cb_free_memory(void* ptr) noexcept {
    std::free(ptr);
    return ompd_rc_ok;
}

// §20.4.5 print_string: libraries never print; the text goes to the plugin log channel.
ompd_rc_t cb_print_string(const char* string, int category) noexcept {
    if (string == nullptr) {
        return ompd_rc_bad_input;
    }
    try {
        log::write(log::channel::plugin, "libompd[{}]: {}", category, string);
    } catch (...) {
    }
    return ompd_rc_ok;
}

// §20.4.2.2 sizeof_type: the x86-64 LP64 sizes (the only ABI libtracer debugs).
ompd_rc_t cb_sizeof_type(ompd_address_space_context_t* ctx, ompd_device_type_sizes_t* sizes) noexcept {
    if (sizes == nullptr) {
        return ompd_rc_bad_input;
    }
    if (owner_of(ctx) == nullptr) {
        return ompd_rc_stale_handle;
    }
    sizes->sizeof_char = 1;
    sizes->sizeof_short = 2;
    sizes->sizeof_int = 4;
    sizes->sizeof_long = 8;
    sizes->sizeof_long_long = 8;
    sizes->sizeof_pointer = 8;
    return ompd_rc_ok;
}

// §20.4.2.3 symbol_addr_lookup: .symtab locals included (ompd_sizeof__*, ompd_access__*,
// ompd_bp_*); a thread context selects the thread for TLS symbols (__kmp_gtid).
ompd_rc_t cb_symbol_addr_lookup(ompd_address_space_context_t* ctx, ompd_thread_context_t* tctx,
                                const char* symbol_name, ompd_address_t* symbol_addr,
                                const char* file_name) noexcept {
    if (symbol_name == nullptr || symbol_addr == nullptr) {
        return ompd_rc_bad_input;
    }
    auto* as = owner_of(ctx);
    if (as == nullptr) {
        return ompd_rc_stale_handle;
    }
    std::optional<pid_t> tid;
    if (tctx != nullptr) {
        if (!is_thread_context_of(as->context, tctx)) {
            return ompd_rc_stale_handle;
        }
        tid = tctx->tid;
    }
    std::uint64_t addr = 0;
    ompd_rc_t rc = as->lookup_symbol(symbol_name, file_name, tid, addr);
    if (rc == ompd_rc_ok) {
        symbol_addr->segment = ompd_segment_none;
        symbol_addr->address = addr;
    }
    return rc;
}

ompd_rc_t check_memory_args(ompd_address_space_context_t* ctx, ompd_thread_context_t* tctx,
                            const ompd_address_t* addr, const void* buffer,
                            ompd_address_space::impl*& as) noexcept {
    if (addr == nullptr || buffer == nullptr) {
        return ompd_rc_bad_input;
    }
    as = owner_of(ctx);
    if (as == nullptr) {
        return ompd_rc_stale_handle;
    }
    if (tctx != nullptr && !is_thread_context_of(as->context, tctx)) {
        return ompd_rc_stale_handle;
    }
    return ompd_rc_ok;
}

// §20.4.3.1 read_memory: exactly nbytes or an error (a garbage pointer in the target gives
// ompd_rc_error, never a crash).
ompd_rc_t cb_read_memory(ompd_address_space_context_t* ctx, ompd_thread_context_t* tctx,
                         const ompd_address_t* addr, ompd_size_t nbytes, void* buffer) noexcept {
    ompd_address_space::impl* as = nullptr;
    if (ompd_rc_t rc = check_memory_args(ctx, tctx, addr, buffer, as); rc != ompd_rc_ok) {
        return rc;
    }
    if (nbytes == 0) {
        return ompd_rc_ok;
    }
    try {
        std::span<std::byte> out(static_cast<std::byte*>(buffer), nbytes);
        if (as->tgt->try_read_memory(virt_addr(addr->address), out) != nbytes) {
            return ompd_rc_error;
        }
        return ompd_rc_ok;
    } catch (...) {
        return ompd_rc_error;
    }
}

// §20.4.3.1 read_string: up to nbytes, stopping after the NUL; ompd_rc_incomplete when no
// NUL is found within nbytes.
ompd_rc_t cb_read_string(ompd_address_space_context_t* ctx, ompd_thread_context_t* tctx,
                         const ompd_address_t* addr, ompd_size_t nbytes, void* buffer) noexcept {
    ompd_address_space::impl* as = nullptr;
    if (ompd_rc_t rc = check_memory_args(ctx, tctx, addr, buffer, as); rc != ompd_rc_ok) {
        return rc;
    }
    auto* out = static_cast<char*>(buffer);
    try {
        ompd_size_t done = 0;
        while (done < nbytes) {
            // Chunks that do not cross a page, so a string ending just before an unmapped
            // page is still read.
            std::uint64_t a = addr->address + done;
            ompd_size_t chunk = std::min<ompd_size_t>(nbytes - done, 4096 - (a % 4096));
            std::span<std::byte> span(reinterpret_cast<std::byte*>(out + done), chunk);
            std::size_t got = as->tgt->try_read_memory(virt_addr(a), span);
            if (void* nul = std::memchr(out + done, 0, got)) {
                (void)nul;
                return ompd_rc_ok;
            }
            done += got;
            if (got < chunk) {
                return ompd_rc_error;
            }
        }
        return ompd_rc_incomplete;
    } catch (...) {
        return ompd_rc_error;
    }
}

// §20.4.3.2 write_memory: live targets only.
ompd_rc_t cb_write_memory(ompd_address_space_context_t* ctx, ompd_thread_context_t* tctx,
                          const ompd_address_t* addr, ompd_size_t nbytes, const void* buffer) noexcept {
    ompd_address_space::impl* as = nullptr;
    if (ompd_rc_t rc = check_memory_args(ctx, tctx, addr, buffer, as); rc != ompd_rc_ok) {
        return rc;
    }
    if (!as->tgt->is_live()) {
        return ompd_rc_unsupported;
    }
    try {
        as->tgt->write_memory(virt_addr(addr->address),
                              std::span(static_cast<const std::byte*>(buffer), nbytes));
        return ompd_rc_ok;
    } catch (...) {
        return ompd_rc_error;
    }
}

// §20.4.4 device_to_host / host_to_device: target and host are both little-endian x86-64,
// so conversion is a copy (memmove: libompd converts in place). A unit is one of the basic
// types of ompd_device_type_sizes_t (1 to 8 bytes): any other size is a library's bug, not
// a count of bytes to copy.
ompd_rc_t cb_convert(ompd_address_space_context_t* ctx, const void* input, ompd_size_t unit_size,
                     ompd_size_t count, void* output) noexcept {
    if (input == nullptr || output == nullptr) {
        return ompd_rc_bad_input;
    }
    if (unit_size != 1 && unit_size != 2 && unit_size != 4 && unit_size != 8) {
        return ompd_rc_bad_input;
    }
    if (owner_of(ctx) == nullptr) {
        return ompd_rc_stale_handle;
    }
    if (unit_size != 0 && count > SIZE_MAX / unit_size) {
        return ompd_rc_bad_input;
    }
    std::memmove(output, input, unit_size * count);
    return ompd_rc_ok;
}

// §20.4.2.1 get_thread_context_for_thread_id: LWP ids (what ompdbg passes) and pthread_t
// (struct pthread == the thread pointer, fs_base on x86-64).
ompd_rc_t cb_thread_context(ompd_address_space_context_t* ctx, ompd_thread_id_t kind,
                            ompd_size_t sizeof_thread_id, const void* thread_id,
                            ompd_thread_context_t** thread_context) noexcept {
    if (thread_id == nullptr || thread_context == nullptr) {
        return ompd_rc_bad_input;
    }
    auto* as = owner_of(ctx);
    if (as == nullptr) {
        return ompd_rc_stale_handle;
    }
    try {
        if (kind == thread_id_lwp) {
            std::int64_t lwp = 0;
            if (sizeof_thread_id == 4) {
                std::int32_t v;
                std::memcpy(&v, thread_id, 4);
                lwp = v;
            } else if (sizeof_thread_id == 8) {
                std::memcpy(&lwp, thread_id, 8);
            } else {
                return ompd_rc_bad_input;
            }
            if (as->tgt->find_thread(static_cast<pid_t>(lwp)) == nullptr) {
                return ompd_rc_unavailable;
            }
            *thread_context = thread_context_of(as, static_cast<pid_t>(lwp));
            return ompd_rc_ok;
        }
        if (kind == thread_id_pthread) {
            if (sizeof_thread_id != 8) {
                return ompd_rc_bad_input;
            }
            std::uint64_t pt = 0;
            std::memcpy(&pt, thread_id, 8);
            for (tracer::thread* t : as->tgt->threads()) {
                if (t->state() != tracer::thread_state::exited && t->regs().gp().fs_base == pt) {
                    *thread_context = thread_context_of(as, t->tid());
                    return ompd_rc_ok;
                }
            }
            return ompd_rc_unavailable;
        }
        return ompd_rc_unsupported;
    } catch (...) {
        return ompd_rc_error;
    }
}

}  // namespace

_ompd_thread_cont* thread_context_of(ompd_address_space::impl* as, pid_t tid) {
    return thread_context(as->context, tid);
}

_ompd_aspace_cont* new_aspace_context(ompd_address_space* owner) {
    std::lock_guard lock(registry_mutex());
    auto c = std::make_unique<_ompd_aspace_cont>();
    c->magic = aspace_magic;
    c->owner = owner;
    _ompd_aspace_cont* raw = c.get();
    all_contexts().push_back(std::move(c));
    contexts().locked_insert(raw);
    return raw;
}

void retire_aspace_context(_ompd_aspace_cont* c) {
    std::lock_guard lock(registry_mutex());
    if (c != nullptr) {
        c->owner = nullptr;
        contexts().locked_erase(c);
    }
}

_ompd_aspace_cont* checked_context(const void* p) {
    std::lock_guard lock(registry_mutex());
    if (!contexts().locked_contains(p)) {
        return nullptr;
    }
    auto* c = static_cast<_ompd_aspace_cont*>(const_cast<void*>(p));
    return c->magic == aspace_magic ? c : nullptr;
}

_ompd_thread_cont* thread_context(_ompd_aspace_cont* c, pid_t tid) {
    std::lock_guard lock(registry_mutex());
    auto& slot = c->threads[tid];
    if (!slot) {
        slot = std::make_unique<_ompd_thread_cont>(_ompd_thread_cont{thread_magic, c, tid});
    }
    return slot.get();
}

bool is_thread_context_of(const _ompd_aspace_cont* c, const _ompd_thread_cont* t) {
    // `t` may be garbage from a buggy plugin: compare pointers, never dereference it first.
    std::lock_guard lock(registry_mutex());
    for (const auto& [tid, ctx] : c->threads) {
        if (ctx.get() == t) {
            return true;
        }
    }
    return false;
}

const ompd_callbacks_t& ompd_callback_table() {
    static constexpr ompd_callbacks_t table{
        .alloc_memory = cb_alloc_memory,
        .free_memory = cb_free_memory,
        .print_string = cb_print_string,
        .sizeof_type = cb_sizeof_type,
        .symbol_addr_lookup = cb_symbol_addr_lookup,
        .read_memory = cb_read_memory,
        .write_memory = cb_write_memory,
        .read_string = cb_read_string,
        .device_to_host = cb_convert,
        .host_to_device = cb_convert,
        .get_thread_context_for_thread_id = cb_thread_context,
    };
    return table;
}

}  // namespace ompdbg::plugins::internal
