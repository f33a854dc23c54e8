/* Sibling teams of different sizes at the same nesting level: an outer team of 3 whose
 * thread i forks an inner team of i + 2 threads, three times over (so earlier, ended teams
 * of every size are around when the next ones are forked). Thread 0 of every inner team
 * checks that its size is its parent's thread number + 2 and counts it, so the program
 * itself says how many regions of each size it ran. */
#include <omp.h>
#include <stdatomic.h>

#include "omp_common.h"

static atomic_int outer_regions, inner_regions, inner_by_size[5], mismatches;

int main(void) {
    omp_set_max_active_levels(2);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(3)
    {
        if (omp_get_thread_num() == 0) {
            atomic_fetch_add(&outer_regions, 1);
        }
        int me = omp_get_thread_num();
        for (int round = 0; round < 3; ++round) {
#pragma omp barrier
#pragma omp parallel num_threads(me + 2)
            {
                if (omp_get_thread_num() == 0) {
                    int size = omp_get_num_threads();
                    atomic_fetch_add(&inner_regions, 1);
                    atomic_fetch_add(&inner_by_size[size < 5 ? size : 0], 1);
                    atomic_fetch_add(&mismatches,
                                     size != omp_get_ancestor_thread_num(1) + 2 || omp_get_level() != 2);
                }
            }
        }
    }
    TRUTH("outer_regions=%d inner_regions=%d team2=%d team3=%d team4=%d mismatches=%d",
          atomic_load(&outer_regions), atomic_load(&inner_regions), atomic_load(&inner_by_size[2]),
          atomic_load(&inner_by_size[3]), atomic_load(&inner_by_size[4]), atomic_load(&mismatches));
    omp_checkpoint(1);
    return 0;
}
