/* Workload 8: one parallel region of T threads (argv[1], default 64); the debugger's first
 * breakpoint is checkpoint(), after every thread has started. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void checkpoint(int n) {
    printf("checkpoint threads=%d\n", n);
    fflush(stdout);
}

int main(int argc, char** argv) {
    int t = argc > 1 ? atoi(argv[1]) : 64;
    int seen = 0;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(t) reduction(+ : seen)
    {
        seen += 1;
    }
    checkpoint(seen);
    printf("bench-done threads=%d\n", seen);
    return 0;
}
