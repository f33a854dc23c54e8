/* counter: prints "counter N" for N = 0 .. LIMIT (argv[1], default 1000000), one line
 * about every 20 ms, flushing each line. Attach/detach tests read these lines and check
 * that the sequence goes on without a gap or a repeat after the debugger has detached. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long current; /* the value being printed, for `print current` */

static void pause_a_little(void) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    /* nanosleep is restarted by hand: a ptrace attach interrupts it with EINTR. */
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void print_counter(long n) {
    current = n;
    printf("counter %ld\n", n); /* LINE-MARK: print */
    fflush(stdout);
}

int main(int argc, char **argv) {
    long limit = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    for (long n = 0; n <= limit; ++n) {
        print_counter(n); /* LINE-MARK: loop */
        pause_a_little();
    }
    return 0;
}
