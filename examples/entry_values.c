/* entry_values: built at -O0 and -O2. At -O2 the compilers describe the arguments each
 * call passes (DW_TAG_call_site_parameter), so a debugger can show the value a parameter
 * had on entry to its function: gdb prints "x=x@entry=5" while it still holds that value
 * and "x=23, x@entry=7" once the function changed it. Deterministic. */
#include <stdio.h>

volatile int sink;

__attribute__((noinline)) void leaf(int y) {
    sink = y; /* LINE-MARK: leaf_body */
}

/* x is only returned: it keeps its entry value. */
__attribute__((noinline)) int keeps(int x, int z) {
    leaf(1);
    sink = z;
    leaf(2);
    return x;
}

/* x is overwritten before the call. */
__attribute__((noinline)) int changes(int x) {
    x = x * 3 + sink;
    leaf(x); /* LINE-MARK: changes_call */
    return x;
}

int main(int argc, char **argv) {
    (void)argv;
    int a = keeps(5, argc);
    int b = changes(7);
    printf("keeps %d changes %d\n", a, b);
    return 0;
}
