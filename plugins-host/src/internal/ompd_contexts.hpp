#pragma once
// The debugger-side contexts OMPD passes back to our callbacks (OpenMP 5.1 §20.3.2): they are
// opaque to libompd; we define them. A context lives as long as the debugger (libompd caches
// type layouts keyed by the context pointer, so a pointer must never be reused for another
// target); the registry lets callbacks reject pointers that are not ours.

#include <sys/types.h>

#include <omp-tools.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "ompdbg/plugins/ompd.hpp"

struct _ompd_thread_cont {
    std::uint64_t magic;
    _ompd_aspace_cont* aspace;
    pid_t tid;
};

struct _ompd_aspace_cont {
    std::uint64_t magic;
    /// The address space this context serves; null once it is gone (callbacks then answer
    /// ompd_rc_stale_handle).
    ompdbg::plugins::ompd_address_space* owner;
    /// Thread contexts by LWP; stable addresses for as long as the context lives.
    std::map<pid_t, std::unique_ptr<_ompd_thread_cont>> threads;
};

namespace ompdbg::plugins::internal {

inline constexpr std::uint64_t aspace_magic = 0x6f6d70646267'4153ULL;
inline constexpr std::uint64_t thread_magic = 0x6f6d70646267'5448ULL;

/// A new address-space context for `owner`, registered (never freed: see above).
_ompd_aspace_cont* new_aspace_context(ompd_address_space* owner);
/// Marks a context stale (its address space is being destroyed).
void retire_aspace_context(_ompd_aspace_cont* c);
/// The live context behind a pointer libompd handed us, or nullptr.
_ompd_aspace_cont* checked_context(const void* p);
/// The thread context for `tid` (created on first use).
_ompd_thread_cont* thread_context(_ompd_aspace_cont* c, pid_t tid);
/// True when `t` is a thread context of `c`.
bool is_thread_context_of(const _ompd_aspace_cont* c, const _ompd_thread_cont* t);

/// The ELF file of a module: the target's (when libtracer opened it) or one opened here and
/// shared by path; nullptr when the file cannot be read.
std::shared_ptr<dwarf::elf_file> elf_of(const tracer::loaded_module& m);

/// Our callback table (static, designated initialisers).
const ompd_callbacks_t& ompd_callback_table();

}  // namespace ompdbg::plugins::internal

/// What the callbacks need from an address space (defined in ompd_address_space.cpp).
struct ompdbg::plugins::ompd_address_space::impl {
    ompd_address_space* self = nullptr;
    tracer::target* tgt = nullptr;
    tls_resolver tls;
    _ompd_aspace_cont* context = nullptr;
    ompd_address_space_handle_t* handle = nullptr;
    /// symbol_addr_lookup cache: "file|name" → address; cleared when modules change.
    std::map<std::string, std::optional<std::uint64_t>> symbol_cache;
    /// The same for thread-local symbols: "file|name" → (index in modules(), offset).
    std::map<std::string, std::pair<std::size_t, std::uint64_t>> tls_symbol_cache;
    std::size_t modules_seen = 0;
    /// Thread-local addresses answered while no thread ran (tgt->resume_count() equal to
    /// tls_cache_resumes): libompd asks every thread's __kmp_gtid and more on each query.
    std::map<std::tuple<pid_t, std::size_t, std::uint64_t>, std::uint64_t> tls_cache;
    std::uint64_t tls_cache_resumes = ~std::uint64_t{0};
    std::optional<std::vector<std::pair<std::int64_t, std::string>>> states;
    std::optional<std::vector<omp_icv>> icvs;

    /// Address of `name` (honouring the file-name hint); TLS symbols need `tid`.
    ompd_rc_t lookup_symbol(const char* name, const char* file_hint, std::optional<pid_t> tid,
                            std::uint64_t& out) noexcept;
    /// The address of a thread-local symbol (offset in modules()[module_index]'s block) in
    /// thread `tid` (none: the first thread), through tls_cache.
    ompd_rc_t thread_local_symbol(std::optional<pid_t> tid, std::size_t module_index,
                                  std::uint64_t offset, std::uint64_t& out) noexcept;
    /// TLS block address of `module` in thread `tid` plus offset.
    std::optional<std::uint64_t> tls_address(pid_t tid, const tracer::loaded_module& m,
                                             std::uint64_t offset) noexcept;
};
