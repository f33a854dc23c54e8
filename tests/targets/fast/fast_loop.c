/* Fast breakpoints (issue 21): f is called N times by T OpenMP threads; the program prints
 * its own ground truth (calls, the sum of f's results), then calls tiny() 1000 times (a
 * site too short for a jump). Arguments: N T [check]. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long calls_by_thread[64];
int global_limit = 5;
struct point {
    int x;
    long y;
};
struct point origin = {3, -4};
int values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
volatile long global_i;
/* For dprintf's %s and %p: a string and a null pointer. */
const char* label = "loop";
const char* no_label;

__attribute__((noinline)) long f(long i, int tid) {
    calls_by_thread[tid & 63] += 1;
    global_i = i;
    return i * 3 + tid;
}

/* At -O2 two instructions (mov, ret) of four bytes: no room for the 5-byte jump, so a
 * conditional breakpoint on it keeps its int3. noipa: every call stays a call. */
__attribute__((noinline, noipa)) long tiny(long x) {
    return x;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    long sum = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : sum) schedule(static)
    for (long i = 0; i < n; ++i) {
        sum += f(i, omp_get_thread_num());
    }
    long calls = 0;
    for (int t = 0; t < 64; ++t) {
        calls += calls_by_thread[t];
    }
    printf("calls %ld sum %ld\n", calls, sum);
    long tiny_sum = 0;
    for (long i = 0; i < 1000; ++i) {
        tiny_sum += tiny(i);
    }
    printf("tiny sum %ld\n", tiny_sum);
    if (argc > 3) {
        /* After a detach: the bytes of f in memory against the executable's (with gcc's
         * layout a code address minus __executable_start is its file offset). */
        extern char __executable_start;
        unsigned char file[16], *mem = (unsigned char*)(void*)&f;
        FILE* exe = fopen("/proc/self/exe", "rb");
        int same = exe && fseek(exe, (long)(mem - (unsigned char*)&__executable_start), SEEK_SET) == 0 &&
                   fread(file, 1, sizeof file, exe) == sizeof file;
        for (unsigned k = 0; same && k < sizeof file; ++k) {
            same = file[k] == mem[k];
        }
        if (exe) {
            fclose(exe);
        }
        printf("code of f %s the file\n", same ? "equals" : "differs from");
    }
    return 0;
}
