/* returns: functions returning small aggregates, classified by the SysV x86-64 psABI into
 * rax/rdx (INTEGER) and xmm0/xmm1 (SSE) eightbytes, for `finish`'s "Value returned". Each
 * prints what it returns, so tests compare the debugger with the program itself. */
#include <stdio.h>

struct two_doubles { double x, y; };            /* SSE, SSE */
struct two_floats_int { float a, b; int c; };   /* SSE, INTEGER */
struct long_double { long n; double d; };       /* INTEGER, SSE */
struct three_ints { int a, b, c; };             /* INTEGER, INTEGER */
struct one_float { float f; };                  /* SSE */
struct chars { char c[6]; short s; };           /* INTEGER */

__attribute__((noinline)) struct two_doubles make_two_doubles(double base) {
    struct two_doubles r = {base + 0.5, base * 4.25};
    printf("two_doubles = {x = %g, y = %g}\n", r.x, r.y);
    return r;
}

__attribute__((noinline)) struct two_floats_int make_two_floats_int(int base) {
    struct two_floats_int r = {base + 0.25f, base * 1.5f, base * 7};
    printf("two_floats_int = {a = %g, b = %g, c = %d}\n", r.a, r.b, r.c);
    return r;
}

__attribute__((noinline)) struct long_double make_long_double(long base) {
    struct long_double r = {base * 1000003L, base / 8.0};
    printf("long_double = {n = %ld, d = %g}\n", r.n, r.d);
    return r;
}

__attribute__((noinline)) struct three_ints make_three_ints(int base) {
    struct three_ints r = {base, -base * 3, base + 100};
    printf("three_ints = {a = %d, b = %d, c = %d}\n", r.a, r.b, r.c);
    return r;
}

__attribute__((noinline)) struct one_float make_one_float(float base) {
    struct one_float r = {base * 2.5f};
    printf("one_float = {f = %g}\n", r.f);
    return r;
}

__attribute__((noinline)) struct chars make_chars(int base) {
    struct chars r = {{'a', 'b', 'c', 'd', 'e', 0}, (short)(base * 11)};
    printf("chars = {c = \"%s\", s = %d}\n", r.c, r.s);
    return r;
}

int main(int argc, char **argv) {
    (void)argv;
    int base = argc + 2; /* 3 without arguments; not a compile-time constant */
    double sum = 0;
    sum += make_two_doubles(base).y;
    sum += make_two_floats_int(base).b;
    sum += make_long_double(base).d;
    sum += make_three_ints(base).c;
    sum += make_one_float((float)base).f;
    sum += make_chars(base).s;
    printf("sum = %g\n", sum);
    return 0;
}
