/* Nested parallel regions with different team sizes: 2 outer threads, each forking an inner
 * team of 3. Inner thread 0 of outer thread 0 stops at omp_checkpoint(2) once all 6 inner
 * threads have arrived; the others wait in a barrier. */
#include <omp.h>
#include <stdatomic.h>

#include "omp_common.h"

static atomic_int arrived;

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        {
            int inner = omp_get_thread_num();
#pragma omp critical
            TRUTH("thread outer=%d inner=%d level=%d active_level=%d team_size=%d outer_team_size=%d",
                  outer, inner, omp_get_level(), omp_get_active_level(), omp_get_num_threads(),
                  omp_get_team_size(1));
            atomic_fetch_add(&arrived, 1);
            if (outer == 0 && inner == 0) {
                while (atomic_load(&arrived) < 6) {
                }
                TRUTH("checkpoint level=%d team_size=%d outer_team_size=%d max_active_levels=%d",
                      omp_get_level(), omp_get_num_threads(), omp_get_team_size(1),
                      omp_get_max_active_levels());
                omp_checkpoint(2); /* LINE-MARK: nested-checkpoint */
            }
#pragma omp barrier
        }
    }
    TRUTH("regions=3");
    return 0;
}
