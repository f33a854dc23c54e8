/* Several reductions in one region (int +, int *, double +), a firstprivate array and a
 * shared variable the region only reads: `info locals` tells each copy's scoping from the
 * outlined routine's code (gcc: GOMP_atomic_start; clang: __kmpc_reduce_nowait). */
#include <omp.h>
#include <stdio.h>

void mark(int v) { (void)v; }

int main(void) {
    int ro = 7, fa[3] = {1, 2, 3}, lp = 0, r1 = 0, r2 = 1;
    double fsum = 0.0;
    omp_set_dynamic(0);
    #pragma omp parallel num_threads(2) firstprivate(fa) reduction(+:r1,fsum) reduction(*:r2)
    {
        int inner = ro + fa[1];
        r1 += inner;
        r2 *= 2;
        fsum += 0.5;
        mark(inner); /* LINE-MARK: reductions-region */
        #pragma omp for lastprivate(lp)
        for (int i = 0; i < 4; i++) {
            lp = i;
        }
    }
    printf("r1=%d r2=%d lp=%d fsum=%g\n", r1, r2, lp, fsum);
    return 0;
}
