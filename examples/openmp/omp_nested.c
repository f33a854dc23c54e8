/* Nested parallel regions with different team sizes: 2 outer threads, each forking an inner
 * team of 3. Inner thread 0 of outer thread 0 stops at omp_checkpoint(2) once the 5 other
 * inner threads are inside wait_for_release(), where they stay until the checkpoint has
 * returned: at the checkpoint every thread is at a known place, however loaded the machine. */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>

#include "omp_common.h"

static atomic_int arrived;
static atomic_int released;

/* Counts the caller in, then waits for the checkpoint. Counting inside the function means
 * that a thread counted is a thread in here (or in the sched_yield it calls). */
__attribute__((noinline)) static void wait_for_release(void) {
    atomic_fetch_add(&arrived, 1);
    while (!atomic_load(&released)) {
        sched_yield(); /* LINE-MARK: nested-wait */
    }
}

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2) /* LINE-MARK: nested-outer */
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3) /* LINE-MARK: nested-inner */
        {
            int inner = omp_get_thread_num();
#pragma omp critical
            TRUTH("thread outer=%d inner=%d level=%d active_level=%d team_size=%d outer_team_size=%d",
                  outer, inner, omp_get_level(), omp_get_active_level(), omp_get_num_threads(),
                  omp_get_team_size(1));
            if (outer == 0 && inner == 0) {
                while (atomic_load(&arrived) < 5) {
                    sched_yield();
                }
                TRUTH("checkpoint level=%d team_size=%d outer_team_size=%d max_active_levels=%d waiting=%d",
                      omp_get_level(), omp_get_num_threads(), omp_get_team_size(1),
                      omp_get_max_active_levels(), atomic_load(&arrived));
                omp_checkpoint(2); /* LINE-MARK: nested-checkpoint */
                atomic_store(&released, 1);
            } else {
                wait_for_release();
            }
#pragma omp barrier
        }
    }
    TRUTH("regions=3");
    return 0;
}
