/* A known number of OpenMP events: 3 parallel regions at level 1 (teams of 2, 3, 2), the
 * second with an inner region per thread (3 more, teams of 2), and 5 explicit tasks. */
#include <omp.h>

#include "omp_common.h"

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
    int tasks = 0;
#pragma omp parallel num_threads(2)
    {
    }
#pragma omp parallel num_threads(3)
    {
#pragma omp parallel num_threads(2)
        {
        }
    }
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
            for (int i = 0; i < 5; ++i) {
#pragma omp task
                {
#pragma omp atomic
                    tasks++;
                }
            }
#pragma omp taskwait
        }
    }
    TRUTH("parallel_regions=6 tasks=%d", tasks);
    omp_checkpoint(6);
    return 0;
}
