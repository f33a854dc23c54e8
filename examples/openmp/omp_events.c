/* A known number of OpenMP events: 3 parallel regions at level 1 (teams of 2, 3, 2), the
 * second with an inner region per thread (3 more, teams of 2), and 5 explicit tasks. Thread
 * 0 of every region counts the region by its level and team size, so that the program
 * itself says how many events of each kind it ran. */
#include <omp.h>
#include <stdatomic.h>

#include "omp_common.h"

static atomic_int regions, level2_regions, not_team2_regions, tasks;

static void count_region(void) {
    if (omp_get_thread_num() == 0) {
        atomic_fetch_add(&regions, 1);
        atomic_fetch_add(&level2_regions, omp_get_level() == 2);
        atomic_fetch_add(&not_team2_regions, omp_get_num_threads() != 2);
    }
}

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(2)
    count_region();
#pragma omp parallel num_threads(3)
    {
        count_region();
#pragma omp parallel num_threads(2)
        count_region();
    }
#pragma omp parallel num_threads(2)
    {
        count_region();
#pragma omp single
        {
            for (int i = 0; i < 5; ++i) {
#pragma omp task
                atomic_fetch_add(&tasks, 1);
            }
#pragma omp taskwait
        }
    }
    TRUTH("parallel_regions=%d level2_regions=%d not_team2_regions=%d tasks=%d", atomic_load(&regions),
          atomic_load(&level2_regions), atomic_load(&not_team2_regions), atomic_load(&tasks));
    omp_checkpoint(6);
    return 0;
}
