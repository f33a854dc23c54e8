// ompdbg's DMPL library for LLVM's OpenMP runtime (libomp), as the DMPL paper asks a vendor
// to ship one (dmpl.h). It reaches the target only through the debugger's callbacks.
//
//  - Runtime routines: __kmpc_fork_call is what the encountering thread calls;
//    __kmp_invoke_microtask calls the outlined routine, on every thread of the team.
//  - Names: clang 19 outlines a region of FUNC into FUNC.omp_outlined (the runtime's entry)
//    and FUNC.omp_outlined_debug__ (the body, with the user's variable names), numbered
//    .1, .2 ... for further regions of the same function and chained for nested regions;
//    older clangs use .omp_outlined. and .omp_outlined._debug__.
//  - Threadprivate: with native TLS (clang's default) the debug information says TLS and
//    the debugger resolves it (DMPL_tls_native). With -fnoopenmp-use-tls, and for objects
//    registered through __kmpc_threadprivate_register, each thread's copy lives in the
//    runtime's tables: the thread's global id is the value of the pthread key
//    __kmp_gtid_threadprivate_key (gtid + 1, the paper's Fig. 10), the thread's
//    kmp_info_t is __kmp_threads[gtid], and its th_pri_common hash table (KMP_HASH: address
//    >> 3, modulo the table size) chains private_common entries {next, link, gbl_addr,
//    par_addr, cmn_size} whose gbl_addr is the object's address in the debug information.

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "dmpl_plugin_util.hpp"

namespace {

using namespace ompdbg::dmpl_plugin;

// Everything about a target hangs on its DMPL_process_t; the callback table `cb` is the
// only global (dmpl_plugin_entry.cpp).

// Codes of this library (DMPL_error_string names them).
enum {
    rc_no_callbacks = DMPL_first_user_code,  // DMPL_initialise was not called
    rc_not_openmp_thread,                     // the thread has no gtid (not an OpenMP thread)
    rc_no_type_info,                          // libomp has no debug information
    rc_read_failed,                           // the runtime's tables cannot be read
    rc_corrupt_table,                         // a hash chain does not end
    rc_bad_argument_code
};

// What a process's runtime looks like, found once (DMPL_process_info_t).
struct process_info {
    bool is_libomp = false;
    DMPL_taddr_t threads = 0;        // &__kmp_threads (kmp_info_t **)
    DMPL_taddr_t gtid_key = 0;       // &__kmp_gtid_threadprivate_key (pthread_key_t)
    DMPL_taddr_t d_table = 0;        // &__kmp_threadprivate_d_table
    int off_pri_common = -1;         // kmp_base_info_t::th_pri_common
    int hash_size = 512;             // KMP_HASH_TABLE_SIZE
    int pc_next = 0, pc_gbl = 16, pc_par = 24;         // struct private_common
    int sc_next = 0, sc_gbl = 24;                      // struct shared_common
};

int offset_or(DMPL_type_t* t, const char* member, int fallback) {
    if (t == nullptr || cb->DMPL_field_offset_fp == nullptr) {
        return fallback;
    }
    int off = cb->DMPL_field_offset_fp(t, member);
    return off >= 0 ? off : fallback;
}

process_info* info_of(DMPL_process_t* p) {
    if (auto* existing = reinterpret_cast<process_info*>(cb->DMPL_get_process_info_fp(p))) {
        return existing;
    }
    void* mem = cb->DMPL_malloc_fp(sizeof(process_info));
    if (mem == nullptr) {
        return nullptr;
    }
    auto* pi = new (mem) process_info();
    pi->is_libomp = cb->DMPL_find_symbol_fp(p, "__kmp_threads", &pi->threads) == DMPL_ok &&
                    cb->DMPL_find_symbol_fp(p, "__kmp_gtid_threadprivate_key", &pi->gtid_key) == DMPL_ok &&
                    cb->DMPL_find_symbol_fp(p, "__kmp_threadprivate_d_table", &pi->d_table) == DMPL_ok;
    if (pi->is_libomp) {
        DMPL_type_t* info = cb->DMPL_find_type_fp(p, "kmp_base_info_t", DMPL_lang_cplusplus);
        pi->off_pri_common = offset_or(info, "th_pri_common", -1);
        if (DMPL_type_t* ct = cb->DMPL_find_type_fp(p, "struct common_table", DMPL_lang_cplusplus);
            ct != nullptr && cb->DMPL_sizeof_fp != nullptr && cb->DMPL_sizeof_fp(ct) >= 8) {
            pi->hash_size = cb->DMPL_sizeof_fp(ct) / 8;
        }
        DMPL_type_t* pc = cb->DMPL_find_type_fp(p, "struct private_common", DMPL_lang_cplusplus);
        pi->pc_next = offset_or(pc, "next", pi->pc_next);
        pi->pc_gbl = offset_or(pc, "gbl_addr", pi->pc_gbl);
        pi->pc_par = offset_or(pc, "par_addr", pi->pc_par);
        DMPL_type_t* sc = cb->DMPL_find_type_fp(p, "struct shared_common", DMPL_lang_cplusplus);
        pi->sc_next = offset_or(sc, "next", pi->sc_next);
        pi->sc_gbl = offset_or(sc, "gbl_addr", pi->sc_gbl);
    }
    cb->DMPL_put_process_info_fp(p, reinterpret_cast<DMPL_process_info_t*>(pi));
    return pi;
}

int read_word(DMPL_thread_t* t, DMPL_taddr_t addr, std::uint64_t& out, int size = 8) {
    unsigned char raw[8] = {};
    int rc = cb->DMPL_get_data_fp(t, addr, raw, size);
    if (rc != DMPL_ok) {
        return rc_read_failed;
    }
    unsigned char host[8] = {};
    cb->DMPL_target_to_host_fp(t, raw, host, size);
    out = 0;
    std::memcpy(&out, host, static_cast<std::size_t>(size));
    return DMPL_ok;
}

std::uint64_t hash_of(const process_info& pi, DMPL_taddr_t addr) {
    return (addr >> 3) & static_cast<std::uint64_t>(pi.hash_size - 1);
}

// Looks for `addr` in a hash chain starting at `head`: the entry's `want` field, or 0.
int walk_chain(DMPL_thread_t* t, std::uint64_t head, int next_off, int gbl_off, DMPL_taddr_t addr,
               std::uint64_t& entry) {
    entry = 0;
    for (int guard = 0; head != 0; ++guard) {
        if (guard > 4096) {
            return rc_corrupt_table;
        }
        std::uint64_t gbl = 0;
        if (read_word(t, head + gbl_off, gbl) != DMPL_ok) {
            return rc_read_failed;
        }
        if (gbl == addr) {
            entry = head;
            return DMPL_ok;
        }
        if (read_word(t, head + next_off, head) != DMPL_ok) {
            return rc_read_failed;
        }
    }
    return DMPL_ok;
}

}  // namespace

const int ompdbg::dmpl_plugin::rc_bad_argument = rc_bad_argument_code;

DMPL_EXPORT const char* DMPL_version_string(void) {
    return "ompdbg DMPL library for LLVM libomp (clang outlining), version 1.0";
}

DMPL_EXPORT const char* DMPL_error_string(int rc) {
    switch (rc) {
        case rc_no_callbacks: return "DMPL_initialise was not called";
        case rc_not_openmp_thread: return "the thread is not (yet) an OpenMP thread: the runtime's pthread key holds no global thread id for it";
        case rc_no_type_info: return "libomp has no debug information (kmp_base_info_t::th_pri_common unknown)";
        case rc_read_failed: return "the runtime's threadprivate tables cannot be read";
        case rc_corrupt_table: return "the runtime's threadprivate table is corrupt (a hash chain does not end)";
        case rc_bad_argument_code: return "bad argument";
        default: return standard_error_string(rc);
    }
}

DMPL_EXPORT int DMPL_destroy_process_info(DMPL_process_info_t* info) {
    if (info != nullptr && cb != nullptr) {
        reinterpret_cast<process_info*>(info)->~process_info();
        cb->DMPL_free_fp(info);
    }
    return DMPL_ok;
}

DMPL_EXPORT int DMPL_destroy_thread_info(DMPL_thread_info_t*) {
    return DMPL_ok;  // no per-thread data: the gtid is read again at every stop
}

DMPL_EXPORT const DMPL_rtl_names* DMPL_get_rtl_names(int language) {
    static const DMPL_rtl_names names{"__kmpc_fork_call", "__kmp_invoke_microtask"};
    return known_language(language) ? &names : nullptr;
}

namespace {

constexpr std::string_view outlined_markers[] = {".omp_outlined._debug__", ".omp_outlined.",
                                                 ".omp_outlined_debug__", ".omp_outlined"};

/// The user's function of a clang outlined routine ("main.omp_outlined_debug__.1" → main);
/// nullopt when `sym` is not one. Compiler helpers (reduction functions, task entries,
/// copy functions) give an empty string.
std::optional<std::string> outlined_parent(std::string_view sym) {
    if (sym == ".omp_task_entry." || sym.find(".omp.reduction.") != std::string_view::npos ||
        sym.starts_with(".omp_task_") || sym.starts_with(".omp.") ||
        sym.find(".omp_task_privates_map.") != std::string_view::npos) {
        return std::string();
    }
    std::size_t best = std::string_view::npos;
    std::size_t best_len = 0;
    for (auto m : outlined_markers) {
        auto pos = sym.find(m);
        if (pos != std::string_view::npos && (pos < best || (pos == best && m.size() > best_len))) {
            best = pos;
            best_len = m.size();
        }
    }
    if (best == std::string_view::npos) {
        return std::nullopt;
    }
    if (best == 0) {
        return std::string("?");  // ".omp_outlined." of a task: clang names no function
    }
    return source_function_name(sym.substr(0, best));
}

bool is_internal_variable(std::string_view v) {
    // .global_tid. .bound_tid. .omp.iv .omp.lb .omp.ub .omp.stride .omp.is_last
    // .capture_expr. .privates. .part_id. .task_t. __context
    return v.starts_with('.') || v == "__context";
}

int variable_info(int hints) {
    if (hints & DMPL_hint_parameter) {
        if (hints & DMPL_hint_has_copy) {
            return -1;  // the original of a reduction/lastprivate variable: the copy is shown
        }
        return (hints & DMPL_hint_by_reference) ? DMPL_varinfo_shared : DMPL_varinfo_firstprivate;
    }
    if (hints & DMPL_hint_reduction_code) {
        return DMPL_varinfo_reduction;  // its address is in __kmpc_reduce's list
    }
    if (hints & DMPL_hint_copy) {
        // A local standing for a parameter of the same name: clang's copy of a reduction,
        // lastprivate or (aggregate) firstprivate variable; its code tells which.
        const bool in = hints & DMPL_hint_copied_in, out = hints & DMPL_hint_copied_out;
        if (in && out) {
            return DMPL_varinfo_firstlastprivate;
        }
        if (out) {
            return DMPL_varinfo_lastprivate;
        }
        return in ? DMPL_varinfo_firstprivate : DMPL_varinfo_none;
    }
    return DMPL_varinfo_private;  // clang makes a local of the body only for private data
}

}  // namespace

DMPL_EXPORT const char* const* DMPL_ompdbg_reduction_routines(int language) {
    // clang's outlined code puts the addresses of its reduction copies in a list passed to
    // these, and reads the copies again after them.
    static const char* const names[] = {"__kmpc_reduce", "__kmpc_reduce_nowait", nullptr};
    return known_language(language) ? names : nullptr;
}

namespace {

int demangle_name(const char* mangled, int* res_len, char* demangled, int buf_len, int* flags,
                  int* decl_line) {
    const int hints = *flags;
    *flags = DMPL_varinfo_none;
    *decl_line = 0;
    std::string_view name(mangled);
    if (auto q = split_variable(name)) {
        if (!outlined_parent(q->routine) || outlined_parent(q->routine)->empty()) {
            give_name(q->variable, res_len, demangled, buf_len);
            return DMPL_name_unchanged;  // not in an outlined routine: nothing to say
        }
        if (is_internal_variable(q->variable)) {
            *res_len = 0;
            return DMPL_name_internal;
        }
        int info = variable_info(hints);
        if (info < 0) {
            *res_len = 0;
            return DMPL_name_internal;
        }
        *flags = info;
        return give_name(q->variable, res_len, demangled, buf_len);
    }
    auto parent = outlined_parent(name);
    if (!parent) {
        *res_len = static_cast<int>(name.size());
        return DMPL_name_unchanged;
    }
    if (parent->empty()) {
        *res_len = 0;
        return DMPL_name_internal;
    }
    return give_name(*parent, res_len, demangled, buf_len);
}

}  // namespace

DMPL_EXPORT int DMPL_demangle_name(const char* mangled, int* res_len, char* demangled, int buf_len,
                                   int* flags, int* decl_line) {
    return demangle_guarded(demangle_name, mangled, res_len, demangled, buf_len, flags, decl_line);
}

DMPL_EXPORT int DMPL_get_tls_address(DMPL_thread_t* thr, DMPL_taddr_t in_addr, DMPL_taddr_t* out_addr) {
    if (cb == nullptr) {
        return rc_no_callbacks;
    }
    if (thr == nullptr || out_addr == nullptr) {
        return rc_bad_argument_code;
    }
    DMPL_process_t* process = cb->DMPL_get_process_fp(thr);
    process_info* pi = process ? info_of(process) : nullptr;
    if (pi == nullptr || !pi->is_libomp) {
        return DMPL_tls_native;
    }
    // 1. Is it an object the runtime manages? (__kmpc_threadprivate_register, or a first
    //    __kmpc_threadprivate_cached in any thread, enters it into the d_table.)
    std::uint64_t head = 0;
    if (read_word(thr, pi->d_table + 8 * hash_of(*pi, in_addr), head) != DMPL_ok) {
        return rc_read_failed;
    }
    std::uint64_t shared = 0;
    if (int rc = walk_chain(thr, head, pi->sc_next, pi->sc_gbl, in_addr, shared); rc != DMPL_ok) {
        return rc;
    }
    if (shared == 0) {
        return DMPL_tls_native;
    }
    // 2. The thread's gtid, from the runtime's pthread key (the paper's Fig. 10).
    std::uint64_t key = 0;
    if (read_word(thr, pi->gtid_key, key, 4) != DMPL_ok) {
        return rc_read_failed;
    }
    DMPL_taddr_t value = 0;
    if (cb->DMPL_get_pthread_key_fp(thr, static_cast<DMPL_tword_t>(key), &value) != DMPL_ok || value == 0) {
        return rc_not_openmp_thread;
    }
    const std::uint64_t gtid = value - 1;
    if (gtid == 0) {
        // The initial thread's copy is the object itself (kmp_threadprivate_insert gives
        // the primary thread par_addr == gbl_addr; before any region it has no entry).
        *out_addr = in_addr;
        return DMPL_ok;
    }
    if (pi->off_pri_common < 0) {
        return rc_no_type_info;
    }
    // 3. __kmp_threads[gtid]->th.th_pri_common->data[KMP_HASH(addr)] chain.
    std::uint64_t threads = 0, info = 0, table = 0, chain = 0, entry = 0;
    if (read_word(thr, pi->threads, threads) != DMPL_ok || threads == 0 ||
        read_word(thr, threads + 8 * gtid, info) != DMPL_ok || info == 0 ||
        read_word(thr, info + static_cast<std::uint64_t>(pi->off_pri_common), table) != DMPL_ok) {
        return rc_read_failed;
    }
    if (table == 0) {
        return DMPL_tls_unallocated;
    }
    if (read_word(thr, table + 8 * hash_of(*pi, in_addr), chain) != DMPL_ok) {
        return rc_read_failed;
    }
    if (int rc = walk_chain(thr, chain, pi->pc_next, pi->pc_gbl, in_addr, entry); rc != DMPL_ok) {
        return rc;
    }
    if (entry == 0) {
        return DMPL_tls_unallocated;
    }
    std::uint64_t par = 0;
    if (read_word(thr, entry + static_cast<std::uint64_t>(pi->pc_par), par) != DMPL_ok) {
        return rc_read_failed;
    }
    if (par == 0) {
        return DMPL_tls_unallocated;
    }
    *out_addr = par;
    return DMPL_ok;
}
