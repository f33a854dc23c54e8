/* A DMPL library whose every answer comes from bytes the fuzz target hands it
 * (fuzz_dmpl_set_answers), for fuzz/dmpl.cpp: return codes, lengths, flags, lines, names
 * (NUL-terminated; a library handing out wild pointers runs in our process and is beyond
 * any host's defence), TLS addresses, and, inside DMPL_get_tls_address, calls to the
 * debugger's callbacks with fuzzed arguments, as a buggy library would make them. */
#include <stdint.h>
#include <string.h>

#include "fuzz_answers.h"

#include "ompdbg/plugins/dmpl.h"

#define EXPORT __attribute__((visibility("default")))

static const DMPL_callbacks_t* callbacks;

FUZZ_ANSWERS_SETTER(fuzz_dmpl_set_answers)

static int take_rc(void) {
    static const int codes[] = {DMPL_ok, DMPL_name_too_long, DMPL_name_unchanged, DMPL_name_internal,
                                DMPL_tls_unallocated, DMPL_tls_native, DMPL_first_user_code, -1};
    uint32_t v = take(1);
    return v < 8 ? codes[v] : (int)take(4);
}

EXPORT int DMPL_initialise(const DMPL_callbacks_t* cb) {
    callbacks = cb;
    return DMPL_ok;
}
EXPORT int DMPL_version_compatibility(void) { return XLD_INTERFACE_COMPATIBILITY; }
EXPORT const char* DMPL_version_string(void) { return "fuzzed DMPL answers"; }
EXPORT const char* DMPL_error_string(int rc) {
    (void)rc;
    return take(1) & 1 ? take_name(0) : 0;
}
EXPORT int DMPL_destroy_process_info(DMPL_process_info_t* p) { (void)p; return DMPL_ok; }
EXPORT int DMPL_destroy_thread_info(DMPL_thread_info_t* t) { (void)t; return DMPL_ok; }

EXPORT int DMPL_demangle_name(const char* mangled, int* res_len, char* demangled, int buf_len, int* flags,
                              int* decl_line) {
    (void)mangled;
    const char* name = take_name(1);
    int n = (int)strlen(name);
    /* Writes what fits of the name (honouring buf_len as a correct library must), then
     * fuzzed lengths, flags and lines. */
    if (buf_len > 0) {
        int copy = n < buf_len - 1 ? n : buf_len - 1;
        memcpy(demangled, name, (size_t)copy);
        demangled[copy] = '\0';
    }
    *res_len = take(1) & 1 ? (int)take(4) : n;
    *flags = (int)take(4);
    *decl_line = (int)take(4);
    return take_rc();
}

EXPORT int DMPL_get_tls_address(DMPL_thread_t* thr, DMPL_taddr_t in, DMPL_taddr_t* out) {
    /* A buggy library calls back with whatever it likes. */
    DMPL_process_t* p = callbacks->DMPL_get_process_fp(take(1) & 1 ? thr : (DMPL_thread_t*)(uintptr_t)take(4));
    DMPL_taddr_t addr = 0;
    char buf[256];
    switch (take(1) % 8) {
        case 0: callbacks->DMPL_find_symbol_fp(p, take_name(2), &addr); break;
        case 1: {
            DMPL_type_t* t = callbacks->DMPL_find_type_fp(p, take_name(3), (int)take(1));
            callbacks->DMPL_sizeof_fp(t);
            callbacks->DMPL_field_offset_fp(t, take_name(4));
            break;
        }
        case 2: callbacks->DMPL_get_data_fp(thr, in + take(2), buf, (int)(take(1) % sizeof buf)); break;
        case 3: callbacks->DMPL_get_pthread_key_fp(thr, take(4), &addr); break;
        case 4: callbacks->DMPL_target_to_host_fp(thr, buf, buf, (int)(take(1) % sizeof buf)); break;
        case 5: callbacks->DMPL_prints_fp(take_name(5)); break;
        case 6: callbacks->DMPL_error_string_fp((int)take(4)); break;
        default: {
            DMPL_target_type_sizes_t sizes;
            callbacks->DMPL_get_type_sizes_fp(p, &sizes);
        }
    }
    *out = in + take(4);
    return take_rc();
}

EXPORT const DMPL_rtl_names* DMPL_get_rtl_names(int lang) {
    static DMPL_rtl_names names;
    (void)lang;
    if (take(1) % 4 == 0) {
        return 0;
    }
    names.main_task_dispatcher = take(1) & 1 ? take_name(6) : 0;
    names.microtask_invoker = take(1) & 1 ? take_name(7) : 0;
    return &names;
}

EXPORT const char* const* DMPL_ompdbg_reduction_routines(int lang) {
    static const char* list[9];
    (void)lang;
    size_t n = take(1) % 9;
    if (n == 8) {
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        list[i] = take_name((unsigned)i);
    }
    list[n] = 0;
    return list;
}
