/* Thread 0 holds an omp_lock_t while threads 1-3 wait for it; thread 0 stops at
 * omp_checkpoint(4) once all have tried to take it. */
#include <omp.h>
#include <stdatomic.h>
#include <unistd.h>

#include "omp_common.h"

static omp_lock_t lock;
static atomic_int waiting;

int main(void) {
    omp_init_lock(&lock);
#pragma omp parallel num_threads(4)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_lock(&lock);
#pragma omp barrier
            while (atomic_load(&waiting) < 3) {
            }
            usleep(20000); /* let the waiters reach omp_set_lock */
            TRUTH("checkpoint holder=0 waiters=3 team_size=%d", omp_get_num_threads());
            omp_checkpoint(4); /* LINE-MARK: locks-checkpoint */
            omp_unset_lock(&lock);
        } else {
#pragma omp barrier
            atomic_fetch_add(&waiting, 1);
            omp_set_lock(&lock);
            omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    return 0;
}
