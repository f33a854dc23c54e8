/* Workload 3: T threads (argv[1], default 64) in one parallel region; every thread but the
 * primary waits in the barrier while the primary calls checkpoint(), where the debugger
 * lists `omp threads` and `omp parallel`. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int arrived;

__attribute__((noinline)) void checkpoint(int n) {
    printf("checkpoint threads=%d\n", n);
    fflush(stdout);
}

int main(int argc, char** argv) {
    int t = argc > 1 ? atoi(argv[1]) : 64;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(t)
    {
        if (omp_get_thread_num() == 0) {
            /* The others are at (or entering) the barrier below. */
            while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < omp_get_num_threads() - 1) {
            }
            checkpoint(omp_get_num_threads());
        } else {
            __atomic_fetch_add(&arrived, 1, __ATOMIC_RELEASE);
        }
#pragma omp barrier
    }
    printf("bench-done threads=%d\n", t);
    return 0;
}
