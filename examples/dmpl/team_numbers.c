/* Thread numbers and team sizes for `omp threads` on GNU libgomp (no OMPD): an outer team
 * of 2 whose thread i forks an inner team of i + 2, so 5 threads run at level 2 in two
 * teams of different sizes. Every thread prints its own OS thread id, OpenMP thread number,
 * team size and level ("truth: tid=... num=... size=... level=..."), then all wait until
 * every one has printed; thread 0 of the first inner team calls all_printed() (the test's
 * breakpoint) while the others spin, and releases them when it returns. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int printed, released;

__attribute__((noinline)) void all_printed(void) {
    static volatile int sink;
    sink = 1; /* LINE-MARK: all-printed */
}

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(outer + 2)
        {
            printf("truth: tid=%d num=%d size=%d level=%d\n", (int)syscall(SYS_gettid), omp_get_thread_num(),
                   omp_get_num_threads(), omp_get_level());
            fflush(stdout);
            atomic_fetch_add(&printed, 1);
            while (atomic_load(&printed) < 5) {
            }
            if (outer == 0 && omp_get_thread_num() == 0) {
                all_printed();
                atomic_store(&released, 1);
            }
            while (!atomic_load(&released)) {
            }
        }
    }
    return 0;
}
