// The callbacks a DMPL library calls into the debugger (dmpl.h, DMPL_callbacks_t: the paper's
// 15 and ompdbg's two type callbacks). Each is noexcept and checks its handles first: a
// pointer that is not one of ours (a buggy library) is answered with DMPL_host_bad_argument
// (or nullptr), never dereferenced.

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <span>

#include "internal/dmpl_api.hpp"
#include "internal/live_registry.hpp"
#include "internal/ompd_contexts.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins::internal {

namespace {

live_registry& processes() {
    static live_registry r;
    return r;
}
std::mutex& registry_mutex() { return processes().mutex(); }

void cb_put_process_info(DMPL_process_t* p, DMPL_process_info_t* info) noexcept {
    if (checked_process(p) != nullptr) {
        p->info = info;
    }
}

DMPL_process_info_t* cb_get_process_info(DMPL_process_t* p) noexcept {
    return checked_process(p) != nullptr ? p->info : nullptr;
}

void cb_put_thread_info(DMPL_thread_t* t, DMPL_thread_info_t* info) noexcept {
    if (_DMPL_thread_t* th = checked_thread(t)) {
        th->info = info;
    }
}

DMPL_thread_info_t* cb_get_thread_info(DMPL_thread_t* t) noexcept {
    _DMPL_thread_t* th = checked_thread(t);
    return th != nullptr ? th->info : nullptr;
}

DMPL_process_t* cb_get_process(DMPL_thread_t* t) noexcept {
    _DMPL_thread_t* th = checked_thread(t);
    return th != nullptr ? th->process : nullptr;
}

// x86-64 LP64: the only ABI libtracer debugs.
int cb_get_type_sizes(DMPL_process_t* p, DMPL_target_type_sizes_t* sizes) noexcept {
    if (sizes == nullptr || checked_process(p) == nullptr) {
        return DMPL_host_bad_argument;
    }
    sizes->short_size = 2;
    sizes->int_size = 4;
    sizes->long_size = 8;
    sizes->long_long_size = 8;
    sizes->pointer_size = 8;
    return DMPL_ok;
}

// The first definition in module order (the executable, then libraries as loaded), the
// .symtab's local symbols included (a runtime's static tables such as __kmp_threads).
// Thread-local symbols have no process-wide address: DMPL_host_no_symbol.
int cb_find_symbol(DMPL_process_t* p, const char* name, DMPL_taddr_t* out) noexcept {
    dmpl_process::impl* as = checked_process(p);
    if (as == nullptr || name == nullptr || out == nullptr) {
        return DMPL_host_bad_argument;
    }
    try {
        for (const auto& m : as->tgt->modules()) {
            auto elf = elf_of(m);
            if (!elf) {
                continue;
            }
            for (const auto& s : elf->find_symbols(name)) {
                if (s.value != 0 && s.kind != dwarf::symbol_kind::tls) {
                    *out = m.to_runtime(s.value).addr();
                    return DMPL_ok;
                }
            }
        }
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "DMPL find_symbol {}: {}", name, e.what());
    } catch (...) {
    }
    return DMPL_host_no_symbol;
}

// A named type from the DWARF of every loaded module (the runtime's own first when it has
// debug information, since the library asks about runtime types). The language code is
// accepted but not needed: DWARF names are unambiguous per module.
DMPL_type_t* cb_find_type(DMPL_process_t* p, const char* name, int /*language*/) noexcept {
    dmpl_process::impl* as = checked_process(p);
    if (as == nullptr || name == nullptr) {
        return nullptr;
    }
    try {
        for (const auto& m : as->tgt->modules()) {
            auto elf = elf_of(m);
            dwarf::debug_info* dbg = elf ? elf->debug() : nullptr;
            if (dbg == nullptr) {
                continue;
            }
            if (auto t = dbg->find_type(name)) {
                if (t->is_declaration()) {
                    continue;
                }
                as->types.push_back(std::make_unique<_DMPL_type_t>(_DMPL_type_t{*t}));
                return as->types.back().get();
            }
        }
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "DMPL find_type {}: {}", name, e.what());
    } catch (...) {
    }
    return nullptr;
}

bool is_our_type(const DMPL_type_t* t, dmpl_process::impl*& owner) {
    std::lock_guard lock(registry_mutex());
    for (const void* h : processes().locked_items()) {
        auto* p = static_cast<const _DMPL_process_t*>(h);
        if (p->magic != dmpl_process_magic || p->owner == nullptr) {
            continue;
        }
        for (const auto& mine : p->owner->types) {
            if (mine.get() == t) {
                owner = p->owner;
                return true;
            }
        }
    }
    return false;
}

int cb_sizeof(DMPL_type_t* t) noexcept {
    dmpl_process::impl* owner = nullptr;
    if (t == nullptr || !is_our_type(t, owner)) {
        return -1;
    }
    try {
        return static_cast<int>(t->type.size());
    } catch (...) {
        return -1;
    }
}

// Offset of a data member, looked for through typedefs and into anonymous members and base
// classes (libomp's kmp_info_t is a union around kmp_base_info_t `th`).
int member_offset(const dwarf::type& type, std::string_view name, int depth) {
    if (depth > 8) {
        return -1;
    }
    dwarf::type t = type.strip_cv_typedef();
    for (const auto& m : t.members()) {
        if (m.is_static) {
            continue;
        }
        if (m.name == name) {
            return static_cast<int>(m.byte_offset);
        }
        if (m.name.empty() || m.is_base_class) {
            int inner = member_offset(m.get_type(), name, depth + 1);
            if (inner >= 0) {
                return static_cast<int>(m.byte_offset) + inner;
            }
        }
    }
    return -1;
}

int cb_field_offset(DMPL_type_t* t, const char* member) noexcept {
    dmpl_process::impl* owner = nullptr;
    if (t == nullptr || member == nullptr || !is_our_type(t, owner)) {
        return -1;
    }
    try {
        return member_offset(t->type, member, 0);
    } catch (...) {
        return -1;
    }
}

// Exactly `size` bytes or DMPL_host_read_error (a garbage pointer from the runtime's tables
// must give an error, never a crash).
int cb_get_data(DMPL_thread_t* t, DMPL_taddr_t addr, void* buf, int size) noexcept {
    _DMPL_thread_t* th = checked_thread(t);
    if (th == nullptr || buf == nullptr || size < 0) {
        return DMPL_host_bad_argument;
    }
    if (size == 0) {
        return DMPL_ok;
    }
    try {
        std::span<std::byte> out(static_cast<std::byte*>(buf), static_cast<std::size_t>(size));
        if (th->process->owner->tgt->try_read_memory(virt_addr(addr), out) != out.size()) {
            return DMPL_host_read_error;
        }
        return DMPL_ok;
    } catch (...) {
        return DMPL_host_read_error;
    }
}

// Target and host are both little-endian x86-64: a copy (memmove: in place is allowed).
void cb_target_to_host(DMPL_thread_t* t, const void* in, void* out, int size) noexcept {
    if (checked_thread(t) == nullptr || in == nullptr || out == nullptr || size <= 0) {
        return;
    }
    std::memmove(out, in, static_cast<std::size_t>(size));
}

// The value of a pthread key in the thread, through the app's libthread_db (td_thr_tsd).
int cb_get_pthread_key(DMPL_thread_t* t, DMPL_tword_t key, DMPL_taddr_t* out) noexcept {
    _DMPL_thread_t* th = checked_thread(t);
    if (th == nullptr || out == nullptr || key < 0) {
        return DMPL_host_bad_argument;
    }
    try {
        auto& keys = th->process->owner->keys;
        if (!keys) {
            return DMPL_host_no_key_value;
        }
        auto v = keys(th->tid, static_cast<std::uint64_t>(key));
        if (!v) {
            return DMPL_host_no_key_value;
        }
        *out = *v;
        return DMPL_ok;
    } catch (...) {
        return DMPL_host_no_key_value;
    }
}

void* cb_malloc(std::size_t n) noexcept {
    return std::malloc(n == 0 ? 1 : n);
}

void cb_free(void* p) noexcept {
    std::free(p);
}

const char* cb_error_string(int rc) noexcept {
    switch (rc) {
        case DMPL_ok: return "no error";
        case DMPL_tls_unallocated: return "no space has been allocated for this object";
        case DMPL_name_too_long: return "buffer too small for the demangled name";
        case DMPL_name_unchanged: return "name was not demangled";
        case DMPL_host_bad_argument: return "bad argument (null pointer or unknown handle)";
        case DMPL_host_no_symbol: return "no such symbol in the process";
        case DMPL_host_read_error: return "cannot read target memory";
        case DMPL_host_no_key_value: return "no value for that pthread key in the thread";
        case DMPL_host_no_member: return "no such member";
        default: return "unknown debugger result code";
    }
}

// Libraries never print: the text goes to the plugin log channel.
void cb_prints(const char* text) noexcept {
    if (text == nullptr) {
        return;
    }
    try {
        log::write(log::channel::plugin, "DMPL: {}", text);
    } catch (...) {
    }
}

}  // namespace

dmpl_process::impl* checked_process(const DMPL_process_t* p) {
    std::lock_guard lock(registry_mutex());
    if (!processes().locked_contains(p)) {
        return nullptr;
    }
    return p->owner;
}

_DMPL_thread_t* checked_thread(const DMPL_thread_t* t) {
    if (t == nullptr) {
        return nullptr;
    }
    std::lock_guard lock(registry_mutex());
    // Compare pointers with every live process's threads before touching `t`.
    for (const void* h : processes().locked_items()) {
        auto* p = static_cast<const _DMPL_process_t*>(h);
        if (p->owner == nullptr) {
            continue;
        }
        for (const auto& [tid, th] : p->owner->threads) {
            if (th.get() == t) {
                return th.get();
            }
        }
    }
    return nullptr;
}

void register_dmpl_process(_DMPL_process_t* p) {
    processes().insert(p);
}

void unregister_dmpl_process(_DMPL_process_t* p) {
    processes().erase(p);
}

const DMPL_callbacks_t& dmpl_callback_table() {
    static constexpr DMPL_callbacks_t table{
        .DMPL_put_process_info_fp = cb_put_process_info,
        .DMPL_get_process_info_fp = cb_get_process_info,
        .DMPL_put_thread_info_fp = cb_put_thread_info,
        .DMPL_get_thread_info_fp = cb_get_thread_info,
        .DMPL_get_process_fp = cb_get_process,
        .DMPL_get_type_sizes_fp = cb_get_type_sizes,
        .DMPL_find_symbol_fp = cb_find_symbol,
        .DMPL_find_type_fp = cb_find_type,
        .DMPL_get_data_fp = cb_get_data,
        .DMPL_get_pthread_key_fp = cb_get_pthread_key,
        .DMPL_target_to_host_fp = cb_target_to_host,
        .DMPL_malloc_fp = cb_malloc,
        .DMPL_free_fp = cb_free,
        .DMPL_error_string_fp = cb_error_string,
        .DMPL_prints_fp = cb_prints,
        .DMPL_sizeof_fp = cb_sizeof,
        .DMPL_field_offset_fp = cb_field_offset,
    };
    return table;
}

}  // namespace ompdbg::plugins::internal
