/* Fast breakpoints (issue 21) on a thread-local and in a shared library: N iterations (argv[1],
 * default 100000) on T OpenMP threads (argv[2], default 4) call g, which counts its calls in a
 * thread-local, and lib_step of libfast_step.so. The program prints its own ground truth: how
 * many threads called g at least 1000 times (each passes `tl_calls == 999` once at g's
 * entry) and how many i have i % 1000 == 999 (lib_step's calls with that i). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long lib_step(long i);

__thread long tl_calls;

__attribute__((noinline)) long g(long i) {
    tl_calls += 1;
    return i + tl_calls;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    long sum = 0, reached = 0, last_in_thousand = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum, reached, last_in_thousand)
    {
#pragma omp for schedule(static)
        for (long i = 0; i < n; ++i) {
            sum += g(i) + lib_step(i);
            last_in_thousand += i % 1000 == 999;
        }
        reached += tl_calls >= 1000;
    }
    printf("threads with 1000 calls %ld, i %% 1000 == 999 %ld times, sum %ld\n", reached, last_in_thousand, sum);
    return 0;
}
