/* dropped_params: at -O2 a parameter that the code never uses, or whose value is dead at
 * the stop, is "<optimized out>"; some compilers drop its DIE from the function's concrete
 * instance (gcc's IPA-SRA clone kernel.isra.0, an inlined copy) and keep it only in the
 * abstract instance. gdb still prints every formal parameter. Deterministic. */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void record(long v) {
    sink = v; /* LINE-MARK: dropped-record */
}

/* Inlined into kernel: kernel is then the caller of an inlined frame. */
static inline void report(long s) {
    record(s + 1); /* LINE-MARK: dropped-report */
}

/* wts is never read: gcc removes it from the clone it calls (kernel.isra.0). */
__attribute__((noinline)) static long kernel(long *amp, const long *wts, int count) {
    long s = 0;
    for (int i = 0; i < count; ++i) {
        s += amp[i] * (i + 1);
    }
    report(s); /* LINE-MARK: dropped-kernel */
    return s;
}

/* Inlined into main: its `unused` parameter has no code at all. */
static inline long scaled(long x, int unused, int by) {
    long y = x * by;
    record(y); /* LINE-MARK: dropped-scaled */
    return y;
}

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 8;
    long amp[16];
    long wts[16];
    for (int i = 0; i < 16; ++i) {
        amp[i] = i / 2 + 1;
        wts[i] = i * 3;
    }
    long k = kernel(amp, wts, count);
    long t = scaled(k, argc, 3);
    printf("kernel=%ld scaled=%ld\n", k, t);
    return 0;
}
