/* Calls tick() a number of times (argv[1], default 5) and says how often; exits with 7.
   `marker` is a global the memory tests read and write. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long marker = 0x1122334455667788UL;
volatile int ticks;

__attribute__((noinline)) void tick(void) { ticks++; }

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 5;
    for (int i = 0; i < n; ++i) {
        tick();
    }
    printf("calls=%d marker=%#lx\n", ticks, marker);
    return 7;
}
