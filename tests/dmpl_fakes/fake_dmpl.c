/* Broken DMPL libraries for the bad-input tests, one per FAKE_* macro (tests/CMakeLists.txt):
 *   FAKE_MISSING     lacks DMPL_get_tls_address
 *   FAKE_VERSION     claims interface version 99
 *   FAKE_INITFAIL    DMPL_initialise fails with code 7
 *   FAKE_UNKNOWN     exports the text's spelling DMPL_initialize; DMPL_get_tls_address
 *                    answers a code that DMPL_error_string does not name
 *   FAKE_BADPTR      DMPL_get_tls_address points to unreadable memory (address 0x10) */
#include "ompdbg/plugins/dmpl.h"

#define EXPORT __attribute__((visibility("default")))

static const DMPL_callbacks_t* callbacks;

#ifdef FAKE_UNKNOWN
EXPORT int DMPL_initialize(const DMPL_callbacks_t* cb) {
#else
EXPORT int DMPL_initialise(const DMPL_callbacks_t* cb) {
#endif
    callbacks = cb;
#ifdef FAKE_INITFAIL
    return 7;
#else
    return callbacks != 0 ? DMPL_ok : 1;
#endif
}

EXPORT int DMPL_version_compatibility(void) {
#ifdef FAKE_VERSION
    return 99;
#else
    return XLD_INTERFACE_COMPATIBILITY;
#endif
}

EXPORT const char* DMPL_version_string(void) { return "fake DMPL library for ompdbg tests"; }
EXPORT const char* DMPL_error_string(int rc) { return rc == DMPL_ok ? "fine" : 0; }
EXPORT int DMPL_destroy_process_info(DMPL_process_info_t* p) { (void)p; return DMPL_ok; }
EXPORT int DMPL_destroy_thread_info(DMPL_thread_info_t* t) { (void)t; return DMPL_ok; }

EXPORT int DMPL_demangle_name(const char* mangled, int* res_len, char* demangled, int buf_len,
                              int* flags, int* decl_line) {
    (void)mangled; (void)demangled; (void)buf_len;
    *res_len = 0;
    *flags = 0;
    *decl_line = 0;
    return DMPL_name_unchanged;
}

#ifndef FAKE_MISSING
EXPORT int DMPL_get_tls_address(DMPL_thread_t* thr, DMPL_taddr_t in, DMPL_taddr_t* out) {
    (void)thr; (void)in;
#if defined(FAKE_BADPTR)
    *out = 0x10;
    return DMPL_ok;
#elif defined(FAKE_UNKNOWN)
    (void)out;
    return 4242;
#else
    *out = in;
    return DMPL_ok;
#endif
}
#endif

EXPORT const DMPL_rtl_names* DMPL_get_rtl_names(int lang) {
    static const DMPL_rtl_names names = {"fake_dispatch", "fake_invoke"};
    (void)lang;
    return &names;
}
