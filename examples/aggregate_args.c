/* aggregate_args: at -O2 a struct parameter whose value is dead at the stop is
 * optimized out. gdb's backtrace shows every aggregate argument as "...", optimized out or
 * not (`print frame-arguments scalars`); `info args` shows it as <optimized out>.
 * Deterministic. */
struct pair {
    long x, y;
};

struct big {
    int a[8];
};

__attribute__((noinline)) int use(long k) {
    __asm__ volatile("" ::: "memory");
    return (int)k * 2; /* LINE-MARK: aggregate-use */
}

/* p travels in two registers and is dead once p.x + k is computed. */
__attribute__((noinline, noipa)) int dead_pair(struct pair p, int k) {
    return use(p.x + k) + 1;
}

/* b travels in memory and stays readable. */
__attribute__((noinline, noipa)) int live_big(struct big b, int k) {
    return dead_pair((struct pair){b.a[0], b.a[1]}, k) + 1;
}

int main(void) {
    struct big b = {{1, 2, 3, 4, 5, 6, 7, 8}};
    return live_big(b, 3) == 10 ? 0 : 1;
}
