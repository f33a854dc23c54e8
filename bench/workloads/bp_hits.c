/* Workload 1: a function called N times (argv[1], default 20000). The debugger breaks on
 * tick with `commands silent/continue`; the program prints the sum so a run can be checked. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sum;

__attribute__((noinline)) void tick(int i) {
    sum += i;
}

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    for (int i = 0; i < n; ++i) {
        tick(i);
    }
    printf("bench-done calls=%d sum=%ld\n", n, (long)sum);
    return 0;
}
