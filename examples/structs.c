/* structs: C data of every kind for print/ptype/whatis/set var, plus calls for
 * step/next/finish/until. Deterministic; prints what it computes so tests can compare.
 * Keep line numbers stable: tests break on the LINE-MARK lines. */
#include <stdio.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct point {
    int x;
    int y;
};

struct flags {
    unsigned int ready : 1;
    unsigned int mode : 3;
    signed int delta : 4;
    unsigned int rest : 24;
};

union number {
    int i;
    float f;
    unsigned char bytes[4];
};

struct rect {
    struct point origin; /* nested struct */
    struct point size;
    enum color color;
    char label[16];
};

struct node {
    int value;
    struct node *next;
};

typedef int (*binary_op)(int, int);
typedef struct point point_t;

/* Globals, file statics and thread-locals. */
int global_counter = 42;
double global_ratio = 2.5;
const char *global_name = "structs";
char global_buffer[32] = "hello, world";
int global_array[5] = {1, 2, 3, 4, 5};
int global_matrix[2][3] = {{1, 2, 3}, {4, 5, 6}};
struct point global_point = {10, 20};
struct rect global_rect = {{1, 2}, {30, 40}, BLUE, "box"};
union number global_number = {.i = 0x41424344};
struct flags global_flags = {1, 5, -3, 1000};
enum color global_color = GREEN;
static int file_static = 7;
static struct node list_c = {3, NULL};
static struct node list_b = {2, &list_c};
static struct node list_a = {1, &list_b};
__thread int tls_counter = 99;
__thread struct point tls_point = {5, 6};

static int add(int a, int b) {
    return a + b;
}

static int mul(int a, int b) {
    return a * b;
}

binary_op global_op = add;

/* A function with arguments of several kinds, called from main. */
int area_of(struct rect *r, int scale, const char *why) {
    int w = r->size.x * scale; /* LINE-MARK: area_of_body */
    int h = r->size.y * scale;
    int result = w * h;
    printf("area_of(%s) = %d\n", why, result);
    return result; /* LINE-MARK: area_of_return */
}

/* Recursive, returns a value: for `finish` ("Value returned is $1 = 120"). */
long factorial(int n) {
    if (n <= 1) {
        return 1; /* LINE-MARK: factorial_base */
    }
    return n * factorial(n - 1); /* LINE-MARK: factorial_recurse */
}

int sum_list(const struct node *head) {
    int total = 0;
    for (const struct node *p = head; p != NULL; p = p->next) {
        total += p->value;
    }
    return total;
}

int main(int argc, char **argv __attribute__((unused))) {
    int local_int = 5; /* LINE-MARK: main_start */
    unsigned long local_ulong = 123456789UL;
    char local_char = 'z';
    double local_double = 3.25;
    int local_array[5] = {10, 20, 30, 40, 50}; /* all five read: x/5dw reads them */
    int matrix[2][2] = {{1, 2}, {3, 4}};
    char message[] = "a string";
    struct point p = {3, 4};
    point_t *pp = &p;
    struct rect r = {{0, 0}, {3, 4}, RED, "local rect"};
    struct rect *rp = &r;
    union number num;
    struct flags fl = {0, 3, -2, 77};
    enum color c = BLUE;
    int *ip = &local_int;
    int **ipp = &ip;
    binary_op op = mul;
    void *nothing = NULL;

    num.f = 1.0f;
    strcpy(message, "changed"); /* LINE-MARK: after_locals */
    int a = area_of(rp, 2, "rect"); /* LINE-MARK: call_area */
    long f = factorial(4 + argc); /* LINE-MARK: call_factorial */
    int s = sum_list(&list_a);
    int computed = op(local_int, 3) + global_op(1, 2);

    int loop_total = 0;
    for (int i = 0; i < 10; ++i) { /* LINE-MARK: loop_head */
        loop_total += i * local_array[i % 5]; /* LINE-MARK: loop_body */
    }
    printf("loop_total = %d\n", loop_total); /* LINE-MARK: after_loop */

    printf("area %d factorial %ld list %d computed %d\n", a, f, s, computed);
    printf("p = {%d, %d} pp->y = %d r.size = {%d, %d} **ipp = %d\n", p.x, p.y, pp->y,
           r.size.x, r.size.y, **ipp);
    printf("fl.mode = %u fl.delta = %d c = %d num.i = %#x nothing = %p\n", fl.mode,
           fl.delta, (int)c, (unsigned)num.i, nothing);
    printf("local_char = %c local_ulong = %lu local_double = %g matrix[1][0] = %d\n",
           local_char, local_ulong, local_double, matrix[1][0]);
    printf("globals %d %s %s %d %d tls %d %d static %d\n", global_counter, global_name,
           global_buffer, global_matrix[1][2], global_rect.size.y, tls_counter, tls_point.y,
           file_static);
    printf("message = %s\n", message);
    return 0; /* LINE-MARK: main_return */
}
