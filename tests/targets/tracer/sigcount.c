/* Prints "count N" every 20 ms like counter.c, and "usr1 K" each time SIGUSR1 arrives.
   Attach/detach tests check that a signal sent while it is stopped is not lost. */
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t usr1;

static void on_usr1(int sig) {
    (void)sig;
    usr1++;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGUSR1, on_usr1);
    int seen = 0;
    for (long count = 0;; ++count) {
        while (seen < usr1) {
            printf("usr1 %d\n", ++seen);
        }
        printf("count %ld\n", count);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
