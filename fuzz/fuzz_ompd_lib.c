/* An OMPD library (libompd's entry points, OpenMP 5.1 §20.5) whose every answer comes from
 * bytes the fuzz target hands it (fuzz_ompd_set_answers), for fuzz/ompd.cpp: return codes
 * (the ompd_rc_t values and any int), handles (ours, or NULL with ompd_rc_ok), states and
 * their names, ICV lists, numbers and strings, task functions and frames, versions; and,
 * in every call, callbacks to the debugger with fuzzed contexts, symbol names, addresses,
 * sizes and thread ids, as a buggy library would make them. Buffers it hands the
 * debugger are its own and as large as it says (a library lying about its own buffers
 * runs in our process and is beyond any host's defence). */
#include <stdint.h>
#include <string.h>

#include "fuzz_answers.h"

#include <omp-tools.h>

#define EXPORT __attribute__((visibility("default")))

static const ompd_callbacks_t* cb;
static ompd_address_space_context_t* process_context;

/* Objects whose addresses serve as the handles this library hands out. */
static char handles[4][16];

FUZZ_ANSWERS_SETTER(fuzz_ompd_set_answers)

/* A name as the debugger's to free: copied into memory from its alloc_memory, as state and
 * ICV names are (§20.5.10.1, §20.5.10.2); NULL when that fails. */
static const char* take_owned_name(unsigned slot) {
    const char* name = take_name(slot);
    void* copy = 0;
    if (cb->alloc_memory(strlen(name) + 1, &copy) != ompd_rc_ok) {
        return 0;
    }
    memcpy(copy, name, strlen(name) + 1);
    return (const char*)copy;
}

static ompd_rc_t take_rc(void) {
    uint64_t v = take(1);
    if (v < 128) {
        return ompd_rc_ok;
    }
    return v < 250 ? (ompd_rc_t)(v % 13) : (ompd_rc_t)(int)take(4);
}

/* One of our handles, or NULL. */
static void* take_handle(void) {
    uint64_t v = take(1) % 5;
    return v < 4 ? handles[v] : 0;
}

/* A context as a buggy library passes it: the real one, NULL, or any value. */
static ompd_address_space_context_t* take_context(void) {
    switch (take(1) % 4) {
    case 0: return 0;
    case 1: return (ompd_address_space_context_t*)(uintptr_t)take(8);
    default: return process_context;
    }
}

/* Zero to three fuzzed calls of the debugger's callbacks. */
static void call_back(void) {
    char buf[256];
    ompd_address_t addr = {0, 0};
    ompd_device_type_sizes_t sizes;
    ompd_thread_context_t* tctx = 0;
    for (uint64_t n = take(1) % 4; n > 0; --n) {
        switch (take(1) % 11) {
        case 0: cb->symbol_addr_lookup(take_context(), 0, take_name(0), &addr, take(1) & 1 ? take_name(1) : 0); break;
        case 1:
            addr.address = 0x10000 + take(2);
            cb->read_memory(take_context(), 0, &addr, take(1) % sizeof buf, buf);
            break;
        case 2:
            addr.address = take(1) & 1 ? 0x10000 + take(2) : take(8);
            cb->read_string(take_context(), 0, &addr, take(1) % sizeof buf, buf);
            break;
        case 3:
            addr.address = 0x10000 + take(2);
            cb->write_memory(take_context(), 0, &addr, take(1) % sizeof buf, buf);
            break;
        case 4: cb->sizeof_type(take_context(), &sizes); break;
        case 5: {
            uint64_t unit = 1u << (take(1) % 5);
            cb->device_to_host(take_context(), buf, unit, (take(1) % 64) / unit + 1, buf + 128);
            break;
        }
        case 6: {
            uint64_t unit = 1u << (take(1) % 5);
            cb->host_to_device(take_context(), buf, take(1) & 1 ? unit : take(8), 1, buf + 128);
            break;
        }
        case 7: {
            uint64_t id = take(8);
            cb->get_thread_context_for_thread_id(take_context(), (ompd_thread_id_t)(take(1) % 4), take(1) % 16, &id, &tctx);
            break;
        }
        case 8: {
            void* p = 0;
            if (cb->alloc_memory(take(2), &p) == ompd_rc_ok) {
                cb->free_memory(p);
            }
            break;
        }
        case 9: cb->print_string(take_name(2), (int)take(1)); break;
        default: cb->free_memory(0);
        }
    }
}

EXPORT ompd_rc_t ompd_initialize(ompd_word_t api_version, const ompd_callbacks_t* callbacks) {
    (void)api_version;
    cb = callbacks;
    return ompd_rc_ok;
}
EXPORT ompd_rc_t ompd_get_api_version(ompd_word_t* version) {
    *version = 202011;
    return ompd_rc_ok;
}
EXPORT ompd_rc_t ompd_get_version_string(const char** string) {
    *string = "fuzzed OMPD answers";
    return ompd_rc_ok;
}
EXPORT ompd_rc_t ompd_finalize(void) { return ompd_rc_ok; }

EXPORT ompd_rc_t ompd_process_initialize(ompd_address_space_context_t* context, ompd_address_space_handle_t** handle) {
    process_context = context;
    call_back();
    *handle = (ompd_address_space_handle_t*)(take(1) % 8 == 0 ? 0 : handles[0]);
    return take_rc();
}
EXPORT ompd_rc_t ompd_device_initialize(ompd_address_space_handle_t* process_handle,
                                        ompd_address_space_context_t* device_context, ompd_device_t kind,
                                        ompd_size_t sizeof_id, void* id, ompd_address_space_handle_t** device_handle) {
    (void)process_handle, (void)device_context, (void)kind, (void)sizeof_id, (void)id;
    call_back();
    *device_handle = (ompd_address_space_handle_t*)take_handle();
    return take_rc();
}
EXPORT ompd_rc_t ompd_rel_address_space_handle(ompd_address_space_handle_t* handle) {
    (void)handle;
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_omp_version(ompd_address_space_handle_t* address_space, ompd_word_t* omp_version) {
    (void)address_space;
    *omp_version = (ompd_word_t)take(8);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_omp_version_string(ompd_address_space_handle_t* address_space, const char** string) {
    (void)address_space;
    *string = take(1) & 1 ? take_name(3) : 0;
    return take_rc();
}

#define HANDLE_ANSWER(type, out) \
    do {                          \
        call_back();              \
        *(out) = (type*)take_handle(); \
        return take_rc();         \
    } while (0)

EXPORT ompd_rc_t ompd_get_thread_in_parallel(ompd_parallel_handle_t* p, int thread_num, ompd_thread_handle_t** t) {
    (void)p, (void)thread_num;
    HANDLE_ANSWER(ompd_thread_handle_t, t);
}
EXPORT ompd_rc_t ompd_get_thread_handle(ompd_address_space_handle_t* handle, ompd_thread_id_t kind,
                                        ompd_size_t sizeof_thread_id, const void* thread_id,
                                        ompd_thread_handle_t** t) {
    (void)handle, (void)kind, (void)sizeof_thread_id, (void)thread_id;
    HANDLE_ANSWER(ompd_thread_handle_t, t);
}
EXPORT ompd_rc_t ompd_rel_thread_handle(ompd_thread_handle_t* t) {
    (void)t;
    return take_rc();
}
EXPORT ompd_rc_t ompd_thread_handle_compare(ompd_thread_handle_t* a, ompd_thread_handle_t* b, int* cmp) {
    (void)a, (void)b;
    *cmp = (int)take(4);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_thread_id(ompd_thread_handle_t* t, ompd_thread_id_t kind, ompd_size_t size, void* id) {
    (void)t, (void)kind;
    /* A correct library writes at most `size` bytes. */
    for (ompd_size_t i = 0; i < size; ++i) {
        ((char*)id)[i] = (char)take(1);
    }
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_curr_parallel_handle(ompd_thread_handle_t* t, ompd_parallel_handle_t** p) {
    (void)t;
    HANDLE_ANSWER(ompd_parallel_handle_t, p);
}
EXPORT ompd_rc_t ompd_get_enclosing_parallel_handle(ompd_parallel_handle_t* p, ompd_parallel_handle_t** e) {
    (void)p;
    HANDLE_ANSWER(ompd_parallel_handle_t, e);
}
EXPORT ompd_rc_t ompd_get_task_parallel_handle(ompd_task_handle_t* t, ompd_parallel_handle_t** p) {
    (void)t;
    HANDLE_ANSWER(ompd_parallel_handle_t, p);
}
EXPORT ompd_rc_t ompd_rel_parallel_handle(ompd_parallel_handle_t* p) {
    (void)p;
    return take_rc();
}
EXPORT ompd_rc_t ompd_parallel_handle_compare(ompd_parallel_handle_t* a, ompd_parallel_handle_t* b, int* cmp) {
    (void)a, (void)b;
    *cmp = (int)take(4);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_curr_task_handle(ompd_thread_handle_t* t, ompd_task_handle_t** task) {
    (void)t;
    HANDLE_ANSWER(ompd_task_handle_t, task);
}
EXPORT ompd_rc_t ompd_get_generating_task_handle(ompd_task_handle_t* t, ompd_task_handle_t** g) {
    (void)t;
    HANDLE_ANSWER(ompd_task_handle_t, g);
}
EXPORT ompd_rc_t ompd_get_scheduling_task_handle(ompd_task_handle_t* t, ompd_task_handle_t** s) {
    (void)t;
    HANDLE_ANSWER(ompd_task_handle_t, s);
}
EXPORT ompd_rc_t ompd_get_task_in_parallel(ompd_parallel_handle_t* p, int thread_num, ompd_task_handle_t** t) {
    (void)p, (void)thread_num;
    HANDLE_ANSWER(ompd_task_handle_t, t);
}
EXPORT ompd_rc_t ompd_rel_task_handle(ompd_task_handle_t* t) {
    (void)t;
    return take_rc();
}
EXPORT ompd_rc_t ompd_task_handle_compare(ompd_task_handle_t* a, ompd_task_handle_t* b, int* cmp) {
    (void)a, (void)b;
    *cmp = (int)take(4);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_task_function(ompd_task_handle_t* t, ompd_address_t* entry) {
    (void)t;
    entry->segment = take(8);
    entry->address = take(8);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_task_frame(ompd_task_handle_t* t, ompd_frame_info_t* exit_frame, ompd_frame_info_t* enter_frame) {
    (void)t;
    exit_frame->frame_address.address = take(8);
    exit_frame->frame_flag = (ompd_word_t)take(8);
    enter_frame->frame_address.address = take(8);
    enter_frame->frame_flag = (ompd_word_t)take(8);
    return take_rc();
}
EXPORT ompd_rc_t ompd_enumerate_states(ompd_address_space_handle_t* h, ompd_word_t current, ompd_word_t* next,
                                       const char** name, ompd_word_t* more) {
    (void)h, (void)current;
    ompd_rc_t rc = take_rc();
    *next = (ompd_word_t)take(take(1) & 1 ? 1 : 8);
    /* A name only with ompd_rc_ok: the debugger frees what it is given on success. */
    *name = rc != ompd_rc_ok || take(1) % 8 == 0 ? 0 : take_owned_name(4);
    /* More states while answers last, or a library that never says it is done. */
    *more = answers_left > 0 ? (ompd_word_t)(take(1) % 16 != 0) : 0;
    return rc;
}
EXPORT ompd_rc_t ompd_get_state(ompd_thread_handle_t* t, ompd_word_t* state, ompd_wait_id_t* wait_id) {
    (void)t;
    call_back();
    *state = (ompd_word_t)take(take(1) & 1 ? 1 : 8);
    if (wait_id != 0) {
        *wait_id = take(8);
    }
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_display_control_vars(ompd_address_space_handle_t* h, const char* const** vars) {
    static const char* list[9];
    (void)h;
    size_t n = take(1) % 9;
    for (size_t i = 0; i < n; ++i) {
        list[i] = take_name((unsigned)i);
    }
    list[n] = 0;
    *vars = take(1) % 8 == 0 ? 0 : list;
    return take_rc();
}
EXPORT ompd_rc_t ompd_rel_display_control_vars(const char* const** vars) {
    (void)vars;
    return take_rc();
}
EXPORT ompd_rc_t ompd_enumerate_icvs(ompd_address_space_handle_t* h, ompd_icv_id_t current, ompd_icv_id_t* next,
                                     const char** name, ompd_scope_t* scope, int* more) {
    (void)h, (void)current;
    ompd_rc_t rc = take_rc();
    *next = take(take(1) & 1 ? 1 : 8);
    *name = rc != ompd_rc_ok || take(1) % 8 == 0 ? 0 : take_owned_name(5);
    *scope = (ompd_scope_t)take(1);
    *more = answers_left > 0 ? (take(1) % 16 != 0) : 0;
    return rc;
}
EXPORT ompd_rc_t ompd_get_icv_from_scope(void* handle, ompd_scope_t scope, ompd_icv_id_t id, ompd_word_t* value) {
    (void)handle, (void)scope, (void)id;
    call_back();
    *value = (ompd_word_t)take(8);
    return take_rc();
}
EXPORT ompd_rc_t ompd_get_icv_string_from_scope(void* handle, ompd_scope_t scope, ompd_icv_id_t id, const char** s) {
    (void)handle, (void)scope, (void)id;
    /* The string is the debugger's to free (§20.5.10.3), given with ompd_rc_ok only. */
    ompd_rc_t rc = take_rc();
    *s = rc != ompd_rc_ok || take(1) % 8 == 0 ? 0 : take_owned_name(6);
    return rc;
}
EXPORT ompd_rc_t ompd_get_tool_data(void* handle, ompd_scope_t scope, ompd_word_t* value, ompd_address_t* ptr) {
    (void)handle, (void)scope;
    *value = (ompd_word_t)take(8);
    ptr->address = take(8);
    return take_rc();
}
