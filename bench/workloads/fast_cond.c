/* Workload 11 (issue 21): f called N times across T OpenMP threads, with `break f if i ==
 * N-1` evaluated in the program by ompdbg's agent. Prints its own count. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long calls_by_thread[64];

__attribute__((noinline)) long f(long i, int tid) {
    calls_by_thread[tid & 63] += 1;
    return i * 3 + tid;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 8;
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
