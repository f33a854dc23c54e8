/* Test program for libdwarfview: globals, file statics, thread-locals, nested blocks with
 * shadowing, a function inlined at two call sites, a loop. Lines marked MARK: are looked
 * up by the tests by their marker. */
#include <stdio.h>
#include <stdlib.h>

struct point {
    int x;
    int y;
};

typedef struct point point_t;
typedef unsigned long counter_t;

int global_counter = 7;
struct point global_point = {3, 4};
int global_array[5] = {1, 2, 3, 4, 5};
static int file_static = 11;
__thread int thread_value = 42;
const char* global_name = "dwarf";
counter_t global_ticks;

static inline int square(int v) {
    return v * v;   /* MARK: square_body */
}

__attribute__((noinline)) int add(int a, int b) {
    int sum = a + b;    /* MARK: add_body */
    return sum;
}

__attribute__((noinline)) int blocks(int n) {
    int total = 0;      /* MARK: blocks_first */
    int i;
    for (i = 0; i < n; ++i) {
        int total = i * 2;   /* MARK: blocks_shadow */
        global_counter += total;
    }
    {
        int inner = n + 1;
        total += inner;      /* MARK: blocks_inner */
    }
    return total;
}

__attribute__((noinline)) int use_square(int a, int b) {
    int r = square(a) + square(b);   /* MARK: use_square */
    return r;
}

__attribute__((noinline)) long sum_point(point_t p, counter_t scale) {
    long s = (long)(p.x + p.y) * (long)scale;   /* MARK: sum_point */
    return s;
}

int main(int argc, char** argv) {
    (void)argv;
    int local = argc + 1;     /* MARK: main_first */

    /* a line without code follows */

    local += add(local, 2);   /* MARK: main_after_blank */
    local += blocks(3);
    local += use_square(local, 3);
    local += (int)sum_point(global_point, global_ticks + 1);
    thread_value += local;
    file_static += thread_value;
    printf("%d %d %s\n", local, file_static, global_name);
    return local > 1000000 ? 1 : 0;
}
