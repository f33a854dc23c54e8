/* A team of 4 where thread 3 never reaches the barrier: threads 0-2 wait there forever.
 * For attach: it prints its pid and "stuck" once every thread is in place. */
#include <omp.h>
#include <stdatomic.h>
#include <unistd.h>

#include "omp_common.h"

static atomic_int arrived;
static volatile int release_thread_3;

int main(void) {
    TRUTH("pid=%d", (int)getpid());
#pragma omp parallel num_threads(4)
    {
        int me = omp_get_thread_num();
        atomic_fetch_add(&arrived, 1);
        if (me == 3) {
            while (atomic_load(&arrived) < 4) {
            }
            TRUTH("stuck team_size=%d", omp_get_num_threads());
            while (!release_thread_3) {
                usleep(1000); /* LINE-MARK: stuck-loop */
            }
        }
#pragma omp barrier
    }
    return 0;
}
