/* Workload 9: T threads (argv[1], default 64) in one parallel region, each in hold() with
 * its own `value`; the primary calls checkpoint() from hold() once every other thread
 * spins in hold(), where the debugger compares `value` across the threads (`omp compare`;
 * gdb: `thread apply all print value`). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int arrived;
static volatile int released;

__attribute__((noinline)) void checkpoint(int n) {
    printf("checkpoint threads=%d\n", n);
    fflush(stdout);
}

__attribute__((noinline)) static void hold(int me, int n) {
    volatile double value = me % 7 == 3 ? 0.5 : 0.25;
    if (me == 0) {
        while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < n - 1) {
        }
        checkpoint(n);
        released = 1;
    } else {
        __atomic_fetch_add(&arrived, 1, __ATOMIC_RELEASE);
        while (!released) {
        }
    }
    (void)value;
}

int main(int argc, char** argv) {
    int t = argc > 1 ? atoi(argv[1]) : 64;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(t)
    hold(omp_get_thread_num(), omp_get_num_threads());
    printf("bench-done threads=%d\n", t);
    return 0;
}
