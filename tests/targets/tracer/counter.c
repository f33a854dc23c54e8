/* Prints "count N" every 20 ms, N = 0, 1, 2, ... for argv[1] lines (default: forever).
   Attach/detach tests check that the sequence goes on unbroken. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile long count;

int main(int argc, char** argv) {
    long limit = argc > 1 ? atol(argv[1]) : -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (count = 0; limit < 0 || count < limit; ++count) {
        printf("count %ld\n", count);
        struct timespec ts = {0, 20 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    return 0;
}
