/* inlined_region: at -O2 a function with its own parameters and locals is inlined into a
 * parallel region (as XSBench's calculate_macro_xs). Stopped inside it, `info locals` and
 * `info args` show its own variables as gdb does, without data-sharing labels (those belong
 * to the outlined routine's own variables), and the region line of `bt` names the pragma's
 * line. Every thread computes the same value. Deterministic. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void record(long v) {
    sink = v;
}

static inline long macro_xs(int mat, int num_nucs, const long *conc) {
    long sum = 0;
    for (int j = 0; j < num_nucs; ++j) {
        sum += conc[j] * (mat + j);
    }
    record(sum); /* LINE-MARK: inlined-record */
    return sum;
}

int main(int argc, char **argv) {
    int mat = argc > 1 ? atoi(argv[1]) : 1;
    int num_nucs = 5;
    long conc[8];
    long total[2] = {0, 0};
    for (int i = 0; i < 8; ++i) {
        conc[i] = i + 2;
    }
    omp_set_dynamic(0);
    #pragma omp parallel num_threads(2) firstprivate(mat) shared(num_nucs, conc, total) /* LINE-MARK: inlined-pragma */
    {
        total[omp_get_thread_num()] = macro_xs(mat, num_nucs, conc);
    }
    printf("total=%ld %ld\n", total[0], total[1]);
    return 0;
}
