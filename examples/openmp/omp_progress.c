/* A healthy OpenMP program that keeps computing: a team of 4 shares each step's work, and
 * thread 0 prints "step N value V" after every step, forever (or for argv[1] steps, then
 * "done"). V is deterministic, so a test can check that the program still computes the
 * right sequence after a debugger attached and detached. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "omp_common.h"

#define WORK 32000000L

/* The value of step n: sum over i < WORK of (i * n) % 7. */
static long step_value(long n) {
    long total = 0;
#pragma omp parallel for num_threads(4) reduction(+ : total) /* LINE-MARK: work */
    for (long i = 0; i < WORK; ++i) {
        total += (i * n) % 7;
    }
    return total;
}

int main(int argc, char** argv) {
    long steps = argc > 1 ? atol(argv[1]) : -1;
    TRUTH("pid=%d", (int)getpid());
    for (long n = 1; steps < 0 || n <= steps; ++n) {
        omp_checkpoint((int)n);
        printf("step %ld value %ld\n", n, step_value(n));
        fflush(stdout);
    }
    printf("done\n");
    return 0;
}
