/* Workloads 11, 14, 15, 17 and 18 (issue 21): f called N times across T OpenMP threads, with
 * `break f if i == N-1`, a silent counter or a dprintf at f evaluated in the program by
 * ompdbg's agent. Prints its own count. The optional third argument gives f a body of that
 * many steps of arithmetic (about a nanosecond each), after the breakpoint's site, so that the run
 * can be measured with a function that does some work as well as with an empty one. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long calls_by_thread[64];
long work_steps;

/* A dependent chain the compiler cannot shorten: one multiply-add per step. */
__attribute__((noinline)) long work(long x, long steps) {
    for (long k = 0; k < steps; ++k) {
        x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return x;
}

__attribute__((noinline)) long f(long i, int tid) {
    calls_by_thread[tid & 63] += 1;
    long extra = work_steps > 0 ? work(i, work_steps) & 1 : 0;
    return i * 3 + tid + extra;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 8;
    work_steps = argc > 3 ? atol(argv[3]) : 0;
    long sum = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : sum) schedule(static)
    for (long i = 0; i < n; ++i) {
        sum += f(i, omp_get_thread_num());
    }
    long calls = 0;
    for (int t = 0; t < 64; ++t) {
        calls += calls_by_thread[t];
    }
    printf("bench-done calls=%ld sum=%ld\n", calls, sum);
    return 0;
}
