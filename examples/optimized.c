/* optimized: built at -O0 and -O2. At -O2 square() and scale() are inlined into
 * sum_squares() and main() (inlined frames in `bt`, several locations for
 * `break square`), locals live in registers or are optimized out. Deterministic. */
#include <stdio.h>
#include <stdlib.h>

static inline int square(int v) {
    return v * v; /* LINE-MARK: square_body */
}

static inline int scale(int v, int by) {
    return square(v) * by; /* LINE-MARK: scale_body */
}

/* noinline: a real frame that holds the inlined copies. */
__attribute__((noinline)) int sum_squares(int n, int by) {
    int total = 0;
    for (int i = 1; i <= n; ++i) {
        total += scale(i, by); /* LINE-MARK: sum_loop */
    }
    return total; /* LINE-MARK: sum_return */
}

int main(int argc, char **argv) {
    /* From argv so that -O2 cannot fold everything into constants. */
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int result = sum_squares(n, 2); /* LINE-MARK: call_sum */
    int direct = square(n + 1); /* LINE-MARK: call_square */
    printf("sum_squares(%d, 2) = %d square(%d) = %d\n", n, result, n + 1, direct);
    return 0;
}
