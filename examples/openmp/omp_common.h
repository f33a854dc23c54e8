/* Shared by the OpenMP examples: a breakpoint target and ground-truth printing. Each
 * program prints what it knows about itself ("truth: ...") before it calls
 * omp_checkpoint(), so tests compare the debugger's answers with the program's own. */
#ifndef OMP_COMMON_H
#define OMP_COMMON_H
#include <stdio.h>

/* The tests break here. noinline + a volatile store keep it a real call at -O2. */
__attribute__((noinline)) static void omp_checkpoint(int id) {
    static volatile int sink;
    sink = id;
}

#define TRUTH(...)                 \
    do {                           \
        printf("truth: " __VA_ARGS__); \
        printf("\n");              \
        fflush(stdout);            \
    } while (0)
#endif
