/* Built without debug information (-g0): `break FUNC` past the frame set-up, `bt` ending at
 * main and `until` one instruction at a time (a loop's backward jump runs the loop), as gdb
 * does where there is no DWARF. */
#include <stdio.h>

__attribute__((noinline)) int square(int x) { return x * x; }

__attribute__((noinline)) long sum_squares(int n) {
    long total = 0;
    for (int i = 0; i < n; ++i) {
        total += square(i);
    }
    return total;
}

int main(int argc, char **argv) {
    (void)argv;
    printf("sum %ld\n", sum_squares(argc + 3));
    return 0;
}
