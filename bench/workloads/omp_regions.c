/* Workload 2: N parallel regions (argv[1], default 2000) of 4 threads each. Every region
 * is one parallel-begin event for the debugger. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int total = 0;
    omp_set_dynamic(0);
    for (int i = 0; i < n; ++i) {
#pragma omp parallel num_threads(4) reduction(+ : total)
        {
            total += 1;
        }
    }
    printf("bench-done regions=%d thread-visits=%d\n", n, total);
    return 0;
}
