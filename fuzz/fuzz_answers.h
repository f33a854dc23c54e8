/* The answer stream of the fake plugin libraries of fuzz/ (fuzz_dmpl_plugin.c,
 * fuzz_ompd_lib.c, fuzz_msgq_dll.cpp): the fuzz target hands the library its input through
 * the library's exported set-answers function (FUZZ_ANSWERS_SETTER), and every answer the
 * library gives is taken from it, byte by byte; an exhausted stream answers zeros. Included
 * by exactly one file of each library (its state is that file's). */
#ifndef OMPDBG_FUZZ_ANSWERS_H
#define OMPDBG_FUZZ_ANSWERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define FUZZ_ANSWERS_EXTERN_C extern "C"
#else
#define FUZZ_ANSWERS_EXTERN_C
#endif

static const uint8_t* answers;
static size_t answers_left;

/* The exported function the fuzz target finds with dlsym. */
#define FUZZ_ANSWERS_SETTER(name)                                                                \
    FUZZ_ANSWERS_EXTERN_C __attribute__((visibility("default"))) void name(const uint8_t* data, \
                                                                          size_t size) {        \
        answers = data;                                                                          \
        answers_left = size;                                                                     \
    }

/* The next `bytes` bytes of the stream, little-endian. */
static inline uint64_t take(unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && answers_left > 0; ++i, --answers_left) {
        v |= (uint64_t)*answers++ << (8 * i);
    }
    return v;
}

/* A string of up to 63 bytes from the stream, NUL-terminated, in one of 8 buffers. */
static inline char* take_name(unsigned slot) {
    static char names[8][64];
    char* n = names[slot % 8];
    size_t len = (size_t)(take(1) % 64);
    size_t i = 0;
    for (; i < len && i < 63; ++i) {
        n[i] = (char)take(1);
    }
    n[i] = '\0';
    return n;
}

#endif
