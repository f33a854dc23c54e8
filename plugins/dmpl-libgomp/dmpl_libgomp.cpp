// ompdbg's DMPL library for GNU libgomp (gcc -fopenmp), as the DMPL paper asks a vendor to
// ship one (dmpl.h). It reaches the target only through the debugger's callbacks.
//
//  - Runtime routines: GOMP_parallel is what the encountering thread calls (it runs the
//    outlined routine itself as thread 0); on the other threads of the team gomp_thread_start
//    (libgomp's pthread start routine, a static function: only in libgomp's .symtab, which
//    Debian strips) calls the outlined routine.
//  - Names: gcc outlines a region of FUNC into FUNC._omp_fn.N (N counts the regions of the
//    translation unit), tasks' copy functions into FUNC._omp_cpyfn.N. Shared variables
//    reach the body through the .omp_data_i pointer; the body's own locals carry the user's
//    names.
//  - Threadprivate: gcc always makes a threadprivate variable native TLS (__thread), so
//    DMPL_get_tls_address answers DMPL_tls_native: the debugger resolves the TLS offset in
//    the thread with libthread_db (td_thr_tls_get_addr). The code is documented in dmpl.h.

#include <string>
#include <string_view>

#include "dmpl_plugin_util.hpp"

namespace {

using namespace ompdbg::dmpl_plugin;

constexpr int rc_bad_argument_code = DMPL_first_user_code;

/// FUNC of "FUNC._omp_fn.N" (C++ names demangled); "" for a compiler helper
/// (FUNC._omp_cpyfn.N); nullopt when `sym` is no outlined routine.
std::optional<std::string> outlined_parent(std::string_view sym) {
    if (sym.find("._omp_cpyfn.") != std::string_view::npos) {
        return std::string();
    }
    auto pos = sym.find("._omp_fn.");
    if (pos == std::string_view::npos || pos == 0) {
        return std::nullopt;
    }
    // FUNC._omp_fn.N._omp_fn.M does not occur (gcc numbers per unit), but keep the first.
    return source_function_name(sym.substr(0, pos));
}

/// The scoping of a local of gcc's outlined body. gcc reaches a shared variable through
/// .omp_data_i (a DW_OP_deref location): shared, needs a dereference. A local is a private
/// copy; its code tells a reduction copy (combined into .omp_data_i on the construct's
/// line) and a lastprivate one (a copy of a shared variable of the routine, stored back).
/// A local initialised from .omp_data_i is a firstprivate copy or a copy of a shared
/// variable the body only reads: gcc's code is the same for both, so nothing is claimed.
int variable_info(int hints) {
    if (hints & DMPL_hint_by_reference) {
        return DMPL_varinfo_shared | DMPL_varinfo_needs_dereference;
    }
    if (hints & DMPL_hint_reduction_code) {
        return DMPL_varinfo_reduction;
    }
    const bool in = hints & DMPL_hint_copied_in, out = hints & DMPL_hint_copied_out;
    if ((hints & DMPL_hint_copy) && out) {
        return in ? DMPL_varinfo_firstlastprivate : DMPL_varinfo_lastprivate;
    }
    return in ? DMPL_varinfo_none : DMPL_varinfo_private;
}

}  // namespace

const int ompdbg::dmpl_plugin::rc_bad_argument = rc_bad_argument_code;

DMPL_EXPORT const char* DMPL_version_string(void) {
    return "ompdbg DMPL library for GNU libgomp (gcc outlining), version 1.0";
}

DMPL_EXPORT const char* DMPL_error_string(int rc) {
    switch (rc) {
        case rc_bad_argument_code: return "bad argument";
        default: return standard_error_string(rc);
    }
}

DMPL_EXPORT int DMPL_destroy_process_info(DMPL_process_info_t*) {
    return DMPL_ok;  // nothing is attached to processes
}

DMPL_EXPORT int DMPL_destroy_thread_info(DMPL_thread_info_t*) {
    return DMPL_ok;
}

DMPL_EXPORT const DMPL_rtl_names* DMPL_get_rtl_names(int language) {
    static const DMPL_rtl_names names{"GOMP_parallel", "gomp_thread_start"};
    return known_language(language) ? &names : nullptr;
}

DMPL_EXPORT const char* const* DMPL_ompdbg_reduction_routines(int language) {
    // gcc combines several (or non-atomic) reduction copies between GOMP_atomic_start and
    // GOMP_atomic_end; a single atomic one with a lock-prefixed instruction.
    static const char* const names[] = {"GOMP_atomic_start", nullptr};
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
        auto parent = outlined_parent(q->routine);
        if (!parent || parent->empty()) {
            give_name(q->variable, res_len, demangled, buf_len);
            return DMPL_name_unchanged;
        }
        // .omp_data_i / .omp_data_o: the block of shared variables; gcc's loop and
        // reduction temporaries are named D.1234 (never in DWARF) or start with '.'.
        if (q->variable.starts_with('.')) {
            *res_len = 0;
            return DMPL_name_internal;
        }
        *flags = variable_info(hints);
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

DMPL_EXPORT int DMPL_get_tls_address(DMPL_thread_t* thr, DMPL_taddr_t, DMPL_taddr_t* out_addr) {
    if (cb == nullptr || thr == nullptr || out_addr == nullptr) {
        return rc_bad_argument_code;
    }
    return DMPL_tls_native;
}
