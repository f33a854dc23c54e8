/* One parallel region with each data-sharing clause, for `info locals` inside outlined
 * routines: shared, private, firstprivate, lastprivate, reduction, threadprivate + copyin. */
#include <omp.h>
#include <stdio.h>

int tp = 5;
#pragma omp threadprivate(tp)

void mark(int v) { (void)v; }

int main(void) {
    int sh = 1, pr = 2, fp = 3, lp = 4, red = 0;
    omp_set_dynamic(0);
    #pragma omp parallel num_threads(2) shared(sh) private(pr) firstprivate(fp) reduction(+:red) copyin(tp)
    {
        pr = 10 + omp_get_thread_num();
        sh = sh + 0;
        red += fp + pr + tp;
        mark(pr); /* LINE-MARK: clauses-region */
        #pragma omp for lastprivate(lp)
        for (int i = 0; i < 4; i++) {
            lp = i;
            mark(lp); /* LINE-MARK: clauses-loop */
        }
    }
    printf("red=%d lp=%d\n", red, lp);
    return 0;
}
