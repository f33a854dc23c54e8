/* A team of 3 where every thread stops in omp_checkpoint(thread number) after the first
 * barrier: the debugger calls functions in a worker thread (thread number 1) while the
 * others stay stopped. Each thread says which number it is ("truth: ..."). */
#include <omp.h>

#include "omp_common.h"

__attribute__((noinline)) int times_ten(int x) { return 10 * x; }

int main(void) {
    omp_set_num_threads(3);
    omp_set_dynamic(0);
#pragma omp parallel
    {
        int me = omp_get_thread_num();
#pragma omp barrier
        omp_checkpoint(me); /* LINE-MARK: calls-checkpoint */
#pragma omp barrier
        if (me == 0) {
            TRUTH("done team_size=%d", omp_get_num_threads());
        }
    }
    return times_ten(0);
}
