/* A message-queue DLL (the mqs_* interface; C++ only because our interface header is)
 * whose every answer comes from bytes the fuzz target hands it (fuzz_msgq_set_answers),
 * for fuzz/msgq.cpp: return codes, communicators (names of 64 bytes with or without a NUL,
 * any size and rank), communicator groups, queue entries with fuzzed ranks, tags, lengths
 * and extra_text lines, error strings and messages; and, in mqs_setup_image /
 * mqs_setup_process, calls to the debugger's callbacks with fuzzed names, handles,
 * addresses and sizes, as a buggy DLL would make them. Pointers it hands out point into
 * its own static buffers (a DLL handing out wild pointers runs in our process and is
 * beyond any host's defence). */
#include <cstdint>
#include <cstring>

#include "fuzz_answers.h"

#include "internal/mqs_interface.hpp"

#define EXPORT __attribute__((visibility("default")))

static const mqs_basic_callbacks* basic;
static const mqs_image_callbacks* image_cb;
static const mqs_process_callbacks* process_cb;

FUZZ_ANSWERS_SETTER(fuzz_msgq_set_answers)

/* Fills `size` bytes from the answers as they come: no NUL guaranteed. */
static void take_bytes(char* out, size_t size) {
    for (size_t i = 0; i < size; ++i) {
        out[i] = (char)take(1);
    }
}

/* Mostly the codes the interface defines, sometimes any int. */
static int take_rc(void) {
    static const int codes[] = {mqs_ok, mqs_ok, mqs_ok, mqs_no_information, mqs_end_of_list, mqs_first_user_code, -1};
    uint64_t v = take(1);
    return v < 7 ? codes[v] : (int)take(4);
}

/* One fuzzed call of a debugger callback, as a buggy DLL would make it. */
static void call_back(mqs_image* image, mqs_process* process) {
    mqs_taddr_t addr = 0;
    char buf[256];
    mqs_target_type_sizes sizes;
    mqs_image* other_image = take(1) & 1 ? image : (mqs_image*)(uintptr_t)take(8);
    switch (take(1) % 12) {
    case 0: image_cb->mqs_find_symbol_fp(other_image, take_name(0), &addr); break;
    case 1: image_cb->mqs_find_function_fp(other_image, take_name(1), mqs_lang_c, &addr); break;
    case 2: {
        mqs_type* t = image_cb->mqs_find_type_fp(other_image, take_name(2), mqs_lang_c);
        image_cb->mqs_sizeof_fp(take(1) & 1 ? t : (mqs_type*)(uintptr_t)take(8));
        image_cb->mqs_field_offset_fp(t, take_name(3));
        break;
    }
    case 3: basic->mqs_put_image_info_fp(other_image, (mqs_image_info*)(uintptr_t)take(8)); break;
    case 4: (void)basic->mqs_get_image_info_fp(other_image); break;
    case 5: basic->mqs_dprints_fp(take_name(4)); break;
    case 6: (void)basic->mqs_errorstring_fp((int)take(4)); break;
    case 7: basic->mqs_free_fp(basic->mqs_malloc_fp((size_t)take(2))); break;
    case 8: basic->mqs_free_fp(0); break;
    default:
        if (process == 0) {
            if (image_cb->mqs_get_type_sizes_fp != 0) {
                /* The image table has no process: a buggy DLL passes whatever it has. */
                image_cb->mqs_get_type_sizes_fp((mqs_process*)(uintptr_t)take(8), &sizes);
            }
            break;
        }
        switch (take(1) % 5) {
        case 0: (void)process_cb->mqs_get_global_rank_fp(process); break;
        case 1: (void)process_cb->mqs_get_image_fp(take(1) & 1 ? process : (mqs_process*)(uintptr_t)take(8)); break;
        case 2: {
            mqs_taddr_t from = 0x10000 + take(2);
            (void)process_cb->mqs_fetch_data_fp(process, from, (int)(take(1) % sizeof buf), buf);
            break;
        }
        case 3: process_cb->mqs_target_to_host_fp(process, buf, buf + 128, (int)(take(1) % 128)); break;
        default: image_cb->mqs_get_type_sizes_fp(process, &sizes);
        }
    }
}

EXPORT void mqs_setup_basic_callbacks(const mqs_basic_callbacks* cb) { basic = cb; }
EXPORT char* mqs_version_string(void) { return (char*)"fuzzed message-queue answers"; }
EXPORT int mqs_version_compatibility(void) { return 2; }
EXPORT int mqs_dll_taddr_width(void) { return (int)sizeof(mqs_taddr_t); }
EXPORT char* mqs_dll_error_string(int rc) {
    (void)rc;
    return take(1) & 1 ? take_name(5) : 0;
}

EXPORT int mqs_setup_image(mqs_image* image, const mqs_image_callbacks* cb) {
    image_cb = cb;
    for (uint64_t n = take(1) % 8; n > 0; --n) {
        call_back(image, 0);
    }
    return take_rc();
}
EXPORT int mqs_image_has_queues(mqs_image* image, char** message) {
    (void)image;
    *message = take(1) & 1 ? take_name(6) : 0;
    return take_rc();
}
EXPORT void mqs_destroy_image_info(mqs_image_info* info) { (void)info; }

EXPORT int mqs_setup_process(mqs_process* process, const mqs_process_callbacks* cb) {
    process_cb = cb;
    for (uint64_t n = take(1) % 8; n > 0; --n) {
        call_back((mqs_image*)0, process);
    }
    return take_rc();
}
EXPORT void mqs_destroy_process_info(mqs_process_info* info) { (void)info; }
EXPORT int mqs_process_has_queues(mqs_process* process, char** message) {
    (void)process;
    *message = take(1) & 1 ? take_name(7) : 0;
    return take_rc();
}

EXPORT int mqs_update_communicator_list(mqs_process* process) {
    (void)process;
    return take_rc();
}
EXPORT int mqs_setup_communicator_iterator(mqs_process* process) {
    (void)process;
    return take_rc();
}

/* The size of the communicator last handed out, so that mqs_get_comm_group writes as many
 * entries as a correct DLL would (writing more is beyond the host's defence). */
static mqs_tword_t last_size;

EXPORT int mqs_get_communicator(mqs_process* process, mqs_communicator* comm) {
    (void)process;
    comm->unique_id = (mqs_taddr_t)take(8);
    comm->local_rank = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    comm->size = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    last_size = comm->size;
    take_bytes(comm->name, sizeof comm->name);
    return take_rc();
}
EXPORT int mqs_get_comm_group(mqs_process* process, int* group) {
    (void)process;
    if (last_size > 0 && last_size < 4096) {
        for (mqs_tword_t i = 0; i < last_size; ++i) {
            group[i] = (int)take(take(1) & 1 ? 1 : 4);
        }
    }
    return take_rc();
}
EXPORT int mqs_next_communicator(mqs_process* process) {
    (void)process;
    return answers_left == 0 ? mqs_end_of_list : take_rc();
}

EXPORT int mqs_setup_operation_iterator(mqs_process* process, int op) {
    (void)process;
    (void)op;
    return take_rc();
}
EXPORT int mqs_next_operation(mqs_process* process, mqs_pending_operation* op) {
    (void)process;
    if (answers_left == 0) {
        return mqs_end_of_list;
    }
    op->status = (int)take(1) % 4;
    op->desired_local_rank = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    op->desired_global_rank = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    op->tag_wild = (int)take(1);
    op->desired_tag = (mqs_tword_t)take(4);
    op->desired_length = (mqs_tword_t)take(8);
    op->system_buffer = (int)take(1);
    op->buffer = (mqs_taddr_t)(take(1) & 1 ? 0x10000 + take(2) : take(8));
    op->actual_local_rank = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    op->actual_global_rank = (mqs_tword_t)take(take(1) & 1 ? 1 : 8);
    op->actual_tag = (mqs_tword_t)take(4);
    op->actual_length = (mqs_tword_t)take(8);
    for (int i = 0; i < 5; ++i) {
        /* Sometimes a request line the host parses ("Send: 0x..."), sometimes raw bytes. */
        if (take(1) % 3 == 0) {
            static const char* const forms[] = {"Send: 0x%llx", "Receive: 0x%llx"};
            char line[64];
            int n = 0;
            const char* form = forms[take(1) & 1];
            unsigned long long a = 0x10000 + take(2);
            /* A tiny formatter: the prefix, then the address in hex. */
            const char* colon = strchr(form, '%');
            memcpy(line, form, (size_t)(colon - form));
            n = (int)(colon - form);
            char hex[17];
            int h = 0;
            do {
                hex[h++] = "0123456789abcdef"[a % 16];
                a /= 16;
            } while (a != 0 && h < 16);
            while (h > 0 && n < 63) {
                line[n++] = hex[--h];
            }
            line[n] = '\0';
            memcpy(op->extra_text[i], line, (size_t)n + 1);
        } else {
            take_bytes(op->extra_text[i], sizeof op->extra_text[i]);
        }
    }
    return take_rc();
}
