/* Workload 13: T threads (argv[1], default 16) in one parallel region park for good once
 * every one of them has started; the last to arrive prints "ready pid P threads T". A
 * debugger attaches (on this host or, through gdbserver, on a simulated one) and lists the
 * threads with OMPD. Ends on SIGTERM. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int arrived;

__attribute__((noinline)) static void park(void) {
    for (;;) {
        pause();
    }
}

int main(int argc, char** argv) {
    int t = argc > 1 ? atoi(argv[1]) : 16;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(t)
    {
        if (__atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL) == t) {
            printf("ready pid %d threads %d\n", (int)getpid(), t);
            fflush(stdout);
        }
        park();
    }
    return 0;
}
