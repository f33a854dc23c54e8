/* Changes ICVs and prints the values the runtime reports: omp_set_num_threads(3),
 * omp_set_max_active_levels(3), omp_set_dynamic(0), and OMP_SCHEDULE from the environment.
 * Stops at omp_checkpoint(5) in thread 0 of a team of 3. */
#include <omp.h>

#include "omp_common.h"

int main(void) {
    omp_set_num_threads(3);
    omp_set_max_active_levels(3);
    omp_set_dynamic(0);
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    TRUTH("max_threads=%d max_active_levels=%d dynamic=%d schedule_kind=%d schedule_chunk=%d "
          "num_procs=%d thread_limit=%d",
          omp_get_max_threads(), omp_get_max_active_levels(), omp_get_dynamic(), (int)kind, chunk,
          omp_get_num_procs(), omp_get_thread_limit());
#pragma omp parallel
    {
#pragma omp barrier
        if (omp_get_thread_num() == 0) {
            TRUTH("checkpoint team_size=%d level=%d", omp_get_num_threads(), omp_get_level());
            omp_checkpoint(5); /* LINE-MARK: icvs-checkpoint */
        }
#pragma omp barrier
    }
    return 0;
}
