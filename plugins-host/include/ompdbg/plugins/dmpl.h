/*
 * dmpl.h — the DMPL OpenMP debugging DLL interface (Cownie, DelSignore, de Supinski, Warren:
 * "DMPL: An OpenMP DLL Debugging Interface", OpenMP ARB white paper, 2004), written from the
 * paper's appendix. C, so that a vendor's library written to the paper compiles against it.
 *
 * Same type names, sizes, result codes, language codes, varinfo codes and the 15-entry
 * callback table, in the paper's order. Where the paper is incomplete, ompdbg decides as
 * follows (each marked "ompdbg:" below):
 *
 *  1. DMPL_demangle_name is only a broken comment in the appendix; it is declared here as
 *     Fig. 7 and the comment describe it: (mangled name, result length, buffer, buffer
 *     length, flags, declaration line).
 *  2. The paper defines DMPL_sizeof_ft and DMPL_field_offset_ft but gives them no slot in
 *     DMPL_callbacks_t. They get two slots AFTER the 15 of the paper, so a library written
 *     to the paper (which reads only the first 15) still works; a library that wants them
 *     checks DMPL_callbacks_t_has_type_slots (the debugger always fills them).
 *  3. The text calls the entry point DMPL_initialize, the header DMPL_initialise: ompdbg
 *     accepts a library that exports either (DMPL_initialise is looked up first).
 *  4. Result codes ompdbg's plugins and host add, chosen far from DMPL_first_user_code (100)
 *     so that they cannot collide with a vendor's own codes: DMPL_tls_native,
 *     DMPL_name_internal, and the host's callback errors DMPL_host_*.
 *  5. DMPL_demangle_name input hints: the debugger may OR DMPL_hint_* bits into *flags
 *     before the call (what the debug information says about a variable); a library that
 *     does not know them overwrites *flags, as the paper's libraries do.
 *  6. An optional export, DMPL_ompdbg_reduction_routines(language): the runtime entries
 *     through which a compiler's outlined code combines reduction copies (NULL-terminated).
 *     The debugger reads the outlined routine's code for calls to them and passes what it
 *     found as DMPL_hint_reduction_code (with DMPL_hint_copied_in / _copied_out). A library
 *     without it is used as before; the paper's libraries do not export it.
 *
 * XLD_INTERFACE_COMPATIBILITY is the paper's version macro; DMPL_version_compatibility()
 * must return it (ompdbg refuses any other value).
 */
#ifndef OMPDBG_PLUGINS_DMPL_H
#define OMPDBG_PLUGINS_DMPL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XLD_INTERFACE_COMPATIBILITY 1 /* Version of this interface */

/* Type big enough for an address */
typedef unsigned long long DMPL_taddr_t;

typedef long long DMPL_tword_t;

/* A structure for (target) architectural information */
typedef struct {
    int short_size;     /* sizeof (short) */
    int int_size;       /* sizeof (int) */
    int long_size;      /* sizeof (long) */
    int long_long_size; /* sizeof (long long) */
    int pointer_size;   /* sizeof (void *) */
} DMPL_target_type_sizes_t;

/* Types which will be (cast to) concrete types in the debugger */
typedef struct _DMPL_process_t DMPL_process_t;
typedef struct _DMPL_thread_t DMPL_thread_t;
typedef struct _DMPL_type_t DMPL_type_t;

/* Types which will be (cast to) concrete types in the DLL */
typedef struct _DMPL_process_info_t DMPL_process_info_t;
typedef struct _DMPL_thread_info_t DMPL_thread_info_t;

/* Result codes. DMPL_ok is success, anything else a failure. Functions return int. */
enum {
    DMPL_ok = 0,
    DMPL_tls_unallocated,       /* No space has been allocated for this object */
    DMPL_name_too_long,         /* Return from demangle, buffer is too small */
    DMPL_name_unchanged,        /* Return from demangle name wasn't demangled */
    DMPL_first_user_code = 100, /* Allow for more pre-defines */

    /* ompdbg: returned by DMPL_get_tls_address when the runtime does not manage the object:
     * its storage is what the debug information says. For a native TLS variable
     * (DW_OP_form_tls_address / DW_OP_GNU_push_tls_address: gcc's threadprivate, clang's
     * default) the debugger resolves the offset in the thread itself, with libthread_db's
     * td_thr_tls_get_addr; for any other object the given address is the object. */
    DMPL_tls_native = 0x444d0001,
    /* ompdbg: returned by DMPL_demangle_name for a name the compiler or runtime made up
     * (clang's ".global_tid.", gcc's ".omp_data_i", loop bookkeeping ".omp.iv"): the
     * debugger does not show such variables among the user's. */
    DMPL_name_internal = 0x444d0002,

    /* ompdbg: codes the debugger's callbacks return (DMPL_error_string_fp names them). */
    DMPL_host_bad_argument = 0x48300001, /* a null pointer or an unknown handle */
    DMPL_host_no_symbol = 0x48300002,    /* find_symbol: no such symbol in the process */
    DMPL_host_read_error = 0x48300003,   /* get_data: memory cannot be read */
    DMPL_host_no_key_value = 0x48300004, /* get_pthread_key: no value for that key */
    DMPL_host_no_member = 0x48300005     /* field_offset: no such member */
};

/* Values for languages. The text's Fig. 3 spells C++ DMPL_lang_cplus, the header
 * DMPL_lang_cplusplus: both are defined. */
enum {
    DMPL_lang_unknown = 0,
    DMPL_lang_c = 'c',
    DMPL_lang_cplusplus = 'C',
    DMPL_lang_cplus = 'C',
    DMPL_lang_f77 = 'f',
    DMPL_lang_f9x = 'F'
};

/* Demangling info codes. DMPL_varinfo_needs_dereference is a bit which can be or-ed into
 * any of the other codes. */
enum {
    DMPL_varinfo_needs_dereference = 0x8000, /* needs extra dereference */
    DMPL_varinfo_none = 0,                   /* no info */
    DMPL_varinfo_private,                    /* was on private list */
    DMPL_varinfo_shared,                     /* was on shared list */
    DMPL_varinfo_firstprivate,               /* was on firstprivate list */
    DMPL_varinfo_lastprivate,                /* was on lastprivate list */
    DMPL_varinfo_firstlastprivate,           /* was on first and last private lists */
    DMPL_varinfo_reduction,                  /* was on reduction list */
    DMPL_varinfo_threadprivate,              /* was on threadprivate list */
    DMPL_varinfo_threadshared,               /* was on threadshared list */
    DMPL_varinfo_copyin                      /* was on copyin list */
};

/* ompdbg: input hints of DMPL_demangle_name (see 5. above). The mangled name of a variable
 * is then "ROUTINE::VARIABLE": the (mangled) name of the routine whose scope holds it, two
 * colons, the variable's name in the debug information. */
enum {
    DMPL_hint_parameter = 0x10000,    /* a formal parameter of the routine */
    DMPL_hint_by_reference = 0x20000, /* reached through a reference/pointer (its type or
                                       * its location dereferences) */
    DMPL_hint_has_copy = 0x40000,     /* the routine also has a local of the same name */
    DMPL_hint_copy = 0x80000,         /* a local whose name is also a parameter's, or also a
                                       * shared variable's of the same routine */
    DMPL_hint_reduction_code = 0x100000, /* the routine's code hands this local to a reduction
                                          * routine (see 6.) or combines it atomically on the
                                          * construct's line */
    DMPL_hint_copied_in = 0x200000,   /* the code initialises it from memory reached through
                                       * a parameter */
    DMPL_hint_copied_out = 0x400000,  /* the code stores its value through a parameter */
    DMPL_hint_mask = 0xff0000
};

/* (Types for) Callback functions provided by the debugger to the DLL. */

/* Miscellaneous functions. */
typedef void* (*DMPL_malloc_ft)(size_t);
typedef void (*DMPL_free_ft)(void*);
typedef void (*DMPL_prints_ft)(const char*);
typedef const char* (*DMPL_error_string_ft)(int);

/* Process specific functions. */
/* Store information on the process */
typedef void (*DMPL_put_process_info_ft)(DMPL_process_t*, DMPL_process_info_t*);
/* Get it back */
typedef DMPL_process_info_t* (*DMPL_get_process_info_ft)(DMPL_process_t*);
/* Get the fundamental type sizes for this process */
typedef int (*DMPL_get_type_sizes_ft)(DMPL_process_t*, DMPL_target_type_sizes_t*);
/* Given a process look up the specified symbol */
typedef int (*DMPL_find_symbol_ft)(DMPL_process_t*, const char*, DMPL_taddr_t*);
/* Given a process look up the specified type (the int is a DMPL language code) */
typedef DMPL_type_t* (*DMPL_find_type_ft)(DMPL_process_t*, const char*, int);

/* Type specific functions. */
/* Given a type find its size (negative when unknown) */
typedef int (*DMPL_sizeof_ft)(DMPL_type_t*);
/* Given a type and a member name find the field offset (negative when there is none) */
typedef int (*DMPL_field_offset_ft)(DMPL_type_t*, const char*);

/* Thread specific functions. */
/* Store information on the thread */
typedef void (*DMPL_put_thread_info_ft)(DMPL_thread_t*, DMPL_thread_info_t*);
/* Get it back */
typedef DMPL_thread_info_t* (*DMPL_get_thread_info_ft)(DMPL_thread_t*);
/* Get the process within which the thread resides */
typedef DMPL_process_t* (*DMPL_get_process_ft)(DMPL_thread_t*);
/* Read data from a thread (all of it, or an error) */
typedef int (*DMPL_get_data_ft)(DMPL_thread_t*, DMPL_taddr_t, void*, int);
/* Convert data into host format */
typedef void (*DMPL_target_to_host_ft)(DMPL_thread_t*, const void*, void*, int);
/* Get the value of a pthread key */
typedef int (*DMPL_get_pthread_key_ft)(DMPL_thread_t*, DMPL_tword_t, DMPL_taddr_t*);

/* The callback table itself: the paper's 15 entries, then ompdbg's two (see 2. above). */
typedef struct {
    DMPL_put_process_info_ft DMPL_put_process_info_fp;
    DMPL_get_process_info_ft DMPL_get_process_info_fp;
    DMPL_put_thread_info_ft DMPL_put_thread_info_fp;
    DMPL_get_thread_info_ft DMPL_get_thread_info_fp;
    DMPL_get_process_ft DMPL_get_process_fp;
    DMPL_get_type_sizes_ft DMPL_get_type_sizes_fp;
    DMPL_find_symbol_ft DMPL_find_symbol_fp;
    DMPL_find_type_ft DMPL_find_type_fp;
    DMPL_get_data_ft DMPL_get_data_fp;
    DMPL_get_pthread_key_ft DMPL_get_pthread_key_fp;
    DMPL_target_to_host_ft DMPL_target_to_host_fp;
    DMPL_malloc_ft DMPL_malloc_fp;
    DMPL_free_ft DMPL_free_fp;
    DMPL_error_string_ft DMPL_error_string_fp;
    DMPL_prints_ft DMPL_prints_fp;
    /* ompdbg: the two type callbacks the paper defines without a slot. */
    DMPL_sizeof_ft DMPL_sizeof_fp;
    DMPL_field_offset_ft DMPL_field_offset_fp;
} DMPL_callbacks_t;

/* The number of slots of the paper's table; ompdbg's table has two more. */
#define DMPL_CALLBACKS_SEED_SLOTS 15
#define DMPL_callbacks_t_has_type_slots 1

/* Calls provided by the DLL to the debugger. */
typedef struct {
    const char* main_task_dispatcher; /* Name of the function which the main task calls to
                                       * invoke a microtask. The routine which called this
                                       * is the main task. */
    const char* microtask_invoker;    /* Name of the function which invokes the microtask.
                                       * The function called by this is the microtask. */
} DMPL_rtl_names;

extern int DMPL_initialise(const DMPL_callbacks_t*);
/* ompdbg: the spelling of the paper's text; a library may export either. */
extern int DMPL_initialize(const DMPL_callbacks_t*);
extern int DMPL_version_compatibility(void);
extern const char* DMPL_version_string(void);
extern const char* DMPL_error_string(int);

extern int DMPL_destroy_process_info(DMPL_process_info_t*);
extern int DMPL_destroy_thread_info(DMPL_thread_info_t*);

/* Demangle a mangled name: writes the demangled name (NUL-terminated) to `demangled` and its
 * length (without the NUL) to *res_len. If the demangled name would be too long for the
 * buffer (buf_len bytes, NUL included), returns DMPL_name_too_long with the desired length
 * still in *res_len so that the debugger knows how much space to allocate. *flags receives
 * a DMPL_varinfo_* code (for a variable; DMPL_varinfo_none for a routine), *decl_line the
 * line of the declaration when the name tells it, else 0. DMPL_name_unchanged when the name
 * is not one the compiler made up. (ompdbg: see 5. above for hints in *flags.) */
extern int DMPL_demangle_name(const char* mangled_name, int* res_len, char* demangled,
                              int buf_len, int* flags, int* decl_line);

/* Given an address in the thread (process), which the debugger has been told via the debug
 * information represents a thread private object, obtain the actual address which refers
 * to that object in this thread. (ompdbg: DMPL_tls_native, see above.) */
extern int DMPL_get_tls_address(DMPL_thread_t*, DMPL_taddr_t, DMPL_taddr_t*);

/* Return the names of the appropriate routines in the run time, given the target language */
extern const DMPL_rtl_names* DMPL_get_rtl_names(int);

/* ompdbg: optional (see 6. above). NULL when the language is not supported. */
extern const char* const* DMPL_ompdbg_reduction_routines(int language);

#ifdef __cplusplus
} /* End of extern "C" */
#endif

#endif /* OMPDBG_PLUGINS_DMPL_H */
