/* A statically linked program (no dynamic loader: no agent can be preloaded). */
#include <stdio.h>

__attribute__((noinline)) long g(long k) {
    return k;
}

int main(void) {
    long total = 0;
    for (long k = 0; k < 1000; ++k) {
        total += g(k);
    }
    printf("static total %ld\n", total);
    return 0;
}
