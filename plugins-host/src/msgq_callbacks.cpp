// The callbacks a message-queue DLL calls into the debugger (basic, image and process
// tables of the mqs interface). Each is noexcept and checks that the object it is handed is
// one of ours; lookups that fail are recorded on the image so that the host can name every
// missing type, field and symbol in one message.

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "internal/msgq_contexts.hpp"
#include "internal/live_registry.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins::internal {

namespace {

live_registry& registry() {
    static live_registry r;
    return r;
}
bool is_live(const void* p) { return registry().contains(p); }

msgq_image_ctx* image_of(mqs_image* image) {
    auto* ctx = reinterpret_cast<msgq_image_ctx*>(image);
    return is_live(ctx) ? ctx : nullptr;
}
msgq_process_ctx* process_of(mqs_process* process) {
    auto* ctx = reinterpret_cast<msgq_process_ctx*>(process);
    return is_live(ctx) ? ctx : nullptr;
}
msgq_type_entry* type_of(mqs_type* type) {
    auto* entry = reinterpret_cast<msgq_type_entry*>(type);
    return is_live(entry) ? entry : nullptr;
}

// Every block the DLL gets from us, and how many DLLs are loaded. Open MPI 4.1's DLL loses
// some of what it allocates (communicator groups whose reference count never drops to zero
// in mqs_destroy_process_info), so a long session that reads queues again and again would
// grow without bound. The blocks are given back when the last DLL is unloaded, when no code
// can refer to them any more. Never destroyed: the DLL may be unloaded during exit.
struct dll_heap {
    std::mutex mutex;
    std::unordered_set<void*> blocks;
    int libraries = 0;
};
dll_heap& heap() {
    static auto* h = new dll_heap;
    return *h;
}

// ---- basic callbacks ----
void* cb_malloc(size_t size) noexcept {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p != nullptr) {
        try {
            auto& h = heap();
            std::lock_guard lock(h.mutex);
            h.blocks.insert(p);
        } catch (...) {
            std::free(p);
            return nullptr;
        }
    }
    return p;
}
void cb_free(void* p) noexcept {
    if (p == nullptr) {
        return;
    }
    auto& h = heap();
    std::lock_guard lock(h.mutex);
    // A pointer we never handed out is the DLL's bug: leave it alone rather than corrupt
    // the debugger's heap.
    if (h.blocks.erase(p) != 0) {
        std::free(p);
    }
}
// Libraries never print: the DLL's debug prints go to the plugin log channel.
void cb_dprints(const char* text) noexcept {
    try {
        if (text != nullptr) {
            log::write(log::channel::plugin, "msgq DLL: {}", text);
        }
    } catch (...) {
    }
}
// The debugger's own error codes: only the fetch failure below.
char* cb_errorstring(int code) noexcept {
    static char fetch_failed[] = "cannot read the target's memory";
    static char unknown[] = "unknown debugger error";
    return code == mqs_no_information ? fetch_failed : unknown;
}
void cb_put_image_info(mqs_image* image, mqs_image_info* info) noexcept {
    if (auto* ctx = image_of(image)) {
        ctx->info = info;
    }
}
mqs_image_info* cb_get_image_info(mqs_image* image) noexcept {
    auto* ctx = image_of(image);
    return ctx != nullptr ? ctx->info : nullptr;
}
void cb_put_process_info(mqs_process* process, mqs_process_info* info) noexcept {
    if (auto* ctx = process_of(process)) {
        ctx->info = info;
    }
}
mqs_process_info* cb_get_process_info(mqs_process* process) noexcept {
    auto* ctx = process_of(process);
    return ctx != nullptr ? ctx->info : nullptr;
}

// ---- image callbacks ----
// x86-64 LP64 (the only ABI libtracer debugs); the DLL refines them from the MPI library's
// own MPIR_debug_typedefs_sizeof when it has one.
void cb_get_type_sizes(mqs_process* process, mqs_target_type_sizes* sizes) noexcept {
    if (sizes == nullptr || process_of(process) == nullptr) {
        return;
    }
    sizes->short_size = 2;
    sizes->int_size = 4;
    sizes->long_size = 8;
    sizes->long_long_size = 8;
    sizes->pointer_size = 8;
    sizes->bool_size = 1;
    sizes->size_t_size = 8;
}

int lookup(mqs_image* image, const char* name, mqs_taddr_t* addr, bool function) noexcept {
    auto* ctx = image_of(image);
    if (ctx == nullptr || name == nullptr) {
        return mqs_no_information;
    }
    try {
        std::optional<std::uint64_t> found;
        for (const auto& m : ctx->tgt->modules()) {
            auto elf = elf_of(m);
            if (!elf) {
                continue;
            }
            for (const auto& s : elf->find_symbols(name)) {
                bool is_function = s.kind == dwarf::symbol_kind::function || s.kind == dwarf::symbol_kind::ifunc;
                if (s.value != 0 && is_function == function && s.kind != dwarf::symbol_kind::tls) {
                    found = m.to_runtime(s.value).addr();
                    break;
                }
            }
            if (found) {
                break;
            }
        }
        if (!found) {
            if (std::find(ctx->missing_symbols.begin(), ctx->missing_symbols.end(), name) ==
                ctx->missing_symbols.end()) {
                ctx->missing_symbols.emplace_back(name);
            }
            return mqs_no_information;
        }
        if (addr != nullptr) {
            *addr = *found;
        }
        return mqs_ok;
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "msgq find symbol {}: {}", name, e.what());
    } catch (...) {
    }
    return mqs_no_information;
}

int cb_find_function(mqs_image* image, char* name, mqs_lang_code, mqs_taddr_t* addr) noexcept {
    return lookup(image, name, addr, true);
}
int cb_find_symbol(mqs_image* image, char* name, mqs_taddr_t* addr) noexcept {
    return lookup(image, name, addr, false);
}

mqs_type* cb_find_type(mqs_image* image, char* name, mqs_lang_code) noexcept {
    auto* ctx = image_of(image);
    if (ctx == nullptr || name == nullptr) {
        return nullptr;
    }
    try {
        auto it = ctx->types.find(name);
        if (it == ctx->types.end()) {
            auto entry = find_complete_type(*ctx->tgt, name);
            if (entry) {
                entry->image = ctx;
                registry().insert(entry.get());
            } else {
                ctx->missing_types.emplace_back(name);
            }
            it = ctx->types.emplace(name, std::move(entry)).first;
        }
        return reinterpret_cast<mqs_type*>(it->second.get());
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "msgq find type {}: {}", name, e.what());
    } catch (...) {
    }
    return nullptr;
}

int cb_field_offset(mqs_type* type, char* field) noexcept {
    auto* entry = type_of(type);
    if (entry == nullptr || field == nullptr) {
        return -1;
    }
    try {
        if (auto off = member_offset(entry->type, field)) {
            return static_cast<int>(*off);
        }
    } catch (const std::exception& e) {
        log::write(log::channel::plugin, "msgq field {}.{}: {}", entry->name, field, e.what());
    } catch (...) {
    }
    try {
        if (entry->image != nullptr && is_live(entry->image)) {
            std::string what = entry->name + "." + field;
            auto& missing = entry->image->missing_fields;
            if (std::find(missing.begin(), missing.end(), what) == missing.end()) {
                missing.push_back(std::move(what));
            }
        }
        log::write(log::channel::plugin, "msgq: no field {} in {}", field, entry->name);
    } catch (...) {
    }
    return -1;
}

int cb_sizeof(mqs_type* type) noexcept {
    auto* entry = type_of(type);
    if (entry == nullptr) {
        return 0;
    }
    try {
        return static_cast<int>(entry->type.size());
    } catch (...) {
        return 0;
    }
}

// ---- process callbacks ----
int cb_get_global_rank(mqs_process* process) noexcept {
    auto* ctx = process_of(process);
    return ctx != nullptr ? ctx->global_rank : MQS_INVALID_PROCESS;
}
mqs_image* cb_get_image(mqs_process* process) noexcept {
    auto* ctx = process_of(process);
    return ctx != nullptr ? reinterpret_cast<mqs_image*>(ctx->image) : nullptr;
}
// Exactly `size` bytes or mqs_no_information (a garbage pointer in the target never
// crashes the debugger); the buffer is zeroed on failure since Open MPI's DLL ignores the
// result of some fetches.
int cb_fetch_data(mqs_process* process, mqs_taddr_t addr, int size, void* buffer) noexcept {
    auto* ctx = process_of(process);
    if (ctx == nullptr || buffer == nullptr || size < 0) {
        return mqs_no_information;
    }
    try {
        std::span<std::byte> out(static_cast<std::byte*>(buffer), static_cast<std::size_t>(size));
        std::size_t got = ctx->tgt->try_read_memory(virt_addr(addr), out);
        if (got == out.size()) {
            return mqs_ok;
        }
        std::memset(buffer, 0, out.size());
    } catch (const std::exception& e) {
        std::memset(buffer, 0, static_cast<std::size_t>(size));
        log::write(log::channel::plugin, "msgq fetch 0x{:x}: {}", addr, e.what());
    } catch (...) {
        std::memset(buffer, 0, static_cast<std::size_t>(size));
    }
    return mqs_no_information;
}
// Target and host are both little-endian x86-64: a copy.
void cb_target_to_host(mqs_process* process, const void* in, void* out, int size) noexcept {
    if (process_of(process) == nullptr || in == nullptr || out == nullptr || size <= 0) {
        return;
    }
    std::memcpy(out, in, static_cast<std::size_t>(size));
}

}  // namespace

void msgq_register(const void* ctx) {
    registry().insert(ctx);
}
void msgq_unregister(const void* ctx) {
    registry().erase(ctx);
}

const mqs_basic_callbacks& msgq_basic_callback_table() {
    static const mqs_basic_callbacks table{cb_malloc,         cb_free,           cb_dprints,
                                           cb_errorstring,    cb_put_image_info, cb_get_image_info,
                                           cb_put_process_info, cb_get_process_info};
    return table;
}
const mqs_image_callbacks& msgq_image_callback_table() {
    static const mqs_image_callbacks table{cb_get_type_sizes, cb_find_function, cb_find_symbol,
                                           cb_find_type,      cb_field_offset,  cb_sizeof};
    return table;
}
const mqs_process_callbacks& msgq_process_callback_table() {
    static const mqs_process_callbacks table{cb_get_global_rank, cb_get_image, cb_fetch_data,
                                             cb_target_to_host};
    return table;
}

std::optional<std::uint64_t> find_symbol_address(tracer::target& tgt, const std::string& name) {
    for (const auto& m : tgt.modules()) {
        auto elf = elf_of(m);
        if (!elf) {
            continue;
        }
        for (const auto& s : elf->find_symbols(name)) {
            if (s.value != 0 && s.kind != dwarf::symbol_kind::tls) {
                return m.to_runtime(s.value).addr();
            }
        }
    }
    return std::nullopt;
}

namespace {
bool is_complete(const dwarf::type& t) {
    switch (t.kind()) {
    case dwarf::type_kind::structure:
    case dwarf::type_kind::class_:
    case dwarf::type_kind::union_:
        return t.size() > 0 && !t.members().empty();
    case dwarf::type_kind::void_:
        return false;
    default:
        return t.size() > 0;
    }
}
}  // namespace

std::unique_ptr<msgq_type_entry> find_complete_type(tracer::target& tgt, const std::string& name) {
    for (const auto& m : tgt.modules()) {
        auto elf = elf_of(m);
        if (!elf) {
            continue;
        }
        auto* debug = elf->debug();
        if (debug == nullptr) {
            continue;
        }
        // "foo_t" is usually `typedef struct foo_t foo_t`; a CU that only declares the struct
        // gives an incomplete type, so the struct tag is tried too.
        for (const std::string& spelling : {name, "struct " + name, "union " + name}) {
            auto t = debug->find_type(spelling);
            if (!t) {
                continue;
            }
            auto stripped = t->strip_cv_typedef();
            if (is_complete(stripped)) {
                auto entry = std::make_unique<msgq_type_entry>();
                entry->name = name;
                entry->type = stripped;
                entry->module = m.path.string();
                return entry;
            }
        }
    }
    return nullptr;
}

std::optional<std::uint64_t> member_offset(const dwarf::type& t, const std::string& field) {
    auto stripped = t.strip_cv_typedef();
    for (const auto& mem : stripped.members()) {
        if (mem.name == field) {
            return mem.byte_offset;
        }
    }
    // Members of anonymous structs/unions are members of the enclosing type.
    for (const auto& mem : stripped.members()) {
        if (mem.name.empty()) {
            if (auto inner = member_offset(mem.get_type(), field)) {
                return mem.byte_offset + *inner;
            }
        }
    }
    return std::nullopt;
}

void msgq_dll_loaded() {
    auto& h = heap();
    std::lock_guard lock(h.mutex);
    ++h.libraries;
}

void msgq_dll_unloaded() {
    auto& h = heap();
    std::lock_guard lock(h.mutex);
    if (--h.libraries > 0) {
        return;
    }
    for (void* p : h.blocks) {
        std::free(p);
    }
    h.blocks.clear();
}

}  // namespace ompdbg::plugins::internal
