/* Functions for the debugger to call (`print sq(7)`, `call dump(&p)`): integer, pointer,
 * floating-point and struct arguments, small structs returned in registers, big ones
 * through a hidden pointer, void, varargs, a function pointer, one that crashes and one
 * that never returns. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct point { int x; int y; };
struct mixed { double d; long l; };
struct big { long a[5]; };
struct pair_d { double a; double b; };
struct fi { float f; int i; };

int calls_made;

int sq(int x) { return x * x; }                                   /* LINE-MARK: sq */
long add3(long a, long b, long c) { return a + b + c; }
double scale(double v, float f) { return v * f; }
int many(int a, int b, int c, int d, int e, int f, int g, int h) { return a + b + c + d + e + f + g + h; }
struct point make_point(int x, int y) { struct point p = {x, y}; return p; }
struct mixed make_mixed(double d, long l) { struct mixed m = {d, l}; return m; }
struct big make_big(long base) {
    struct big b;
    for (int i = 0; i < 5; ++i) {
        b.a[i] = base + i;
    }
    return b;
}
struct pair_d make_pair_d(double a, double b) { struct pair_d p = {a, b}; return p; }
struct fi make_fi(float f, int i) { struct fi v = {f, i}; return v; }
double pair_sum(struct pair_d p) { return p.a + p.b; }
int norm1(struct point p) { return (p.x < 0 ? -p.x : p.x) + (p.y < 0 ? -p.y : p.y); }
long sum_big(struct big b) { return b.a[0] + b.a[4]; }
void bump(void) { ++calls_made; }
void dump(const struct point *p) { printf("point %d %d\n", p->x, p->y); fflush(stdout); }
int sum_ints(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int total = 0;
    for (int i = 0; i < n; ++i) {
        total += va_arg(ap, int);
    }
    va_end(ap);
    return total;
}
double sum_doubles(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double total = 0;
    for (int i = 0; i < n; ++i) {
        total += va_arg(ap, double);
    }
    va_end(ap);
    return total;
}
int crash(int *p) { return *p; }                                 /* LINE-MARK: crash */
void spin(void) { puts("spinning"); fflush(stdout); for (volatile int i = 0;; ++i) {} }
size_t my_strlen(const char *s) { return strlen(s); }
int (*op)(int) = sq;

int main(void) {
    struct point origin = {3, -4};
    const char *greeting = "hello";
    int number = 6;
    int (*fp)(int) = sq;
    printf("%d %zu %d %d\n", number, my_strlen(greeting), fp(2), norm1(origin));  /* LINE-MARK: calls-ready */
    printf("pid %d made %d\n", getpid(), calls_made);
    return 0;
}
