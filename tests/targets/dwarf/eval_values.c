/* Typed globals with known values: the expression evaluator and value formatter of
 * libdwarfview are compared with gdb's `print`/`ptype`/`whatis` on this binary (static
 * data, read from the file without running it). */
#include <stdbool.h>
#include <stdint.h>

struct point {
    int x;
    int y;
};
struct inner {
    int a;
    char c;
};
struct outer {
    struct point p;
    struct inner in;
    int arr[3];
    const char *name;
    double ratio;
};
union u {
    int i;
    float f;
    unsigned char bytes[4];
};
enum color { RED, GREEN, BLUE };
enum flags { F_A = 1, F_B = 2, F_C = 4 };
enum negs { NEG = -1, ZERO = 0, POS = 1 };
struct bits {
    unsigned a : 3;
    signed b : 5;
    unsigned c : 1;
    int d;
    unsigned e : 20;
    signed f : 12;
};
struct with_ptrs {
    int *ip;
    const char *s;
    int (*fn)(int, int);
    struct with_ptrs *next;
};
struct empty_arr {
    int n;
    char tag[8];
};
struct anon_holder {
    int x;
    union {
        int a;
        float b;
    };
    struct {
        int c;
    } named;
};
struct repeat_edges {
    int ten[10];
    int eleven[11];
    char cten[10];
    char celeven[12];
    struct {
        int x;
    } q[12];
};
struct flex {
    int n;
    int data[];
};
struct incomplete;
struct bf {
    enum color c : 2;
    bool b : 1;
    int : 3;
    unsigned u : 4;
};
struct __attribute__((packed)) packed {
    char c;
    int i;
    short s;
};
typedef struct point point_t;
typedef unsigned int uint_t;
typedef int (*binop_t)(int, int);
typedef int matrix_t[2][3];

int add(int a, int b) { return a + b; }
int factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }
static int twice(int v) { return 2 * v; }
void no_args(void) {}
int sum_all(int n, ...) { return n; }

int g_int = 42;
int g_neg = -7;
int g_zero = 0;
unsigned int g_uint = 4000000000u;
long g_long = -1234567890123L;
unsigned long g_ulong = 18446744073709551615UL;
short g_short = -3;
unsigned short g_ushort = 65535;
long long g_llong = 9000000000000000000LL;
unsigned long long g_ullong = 12345678901234567890ULL;
char g_char = 'A';
char g_newline = '\n';
char g_nul = 0;
char g_high = (char)0xe9;
signed char g_schar = -5;
unsigned char g_uchar = 200;
bool g_bool = true;
bool g_false = false;
float g_float = 3.14f;
float g_fneg = -0.1f;
float g_fint = 2.0f;
double g_double = 2.5;
double g_pi = 3.141592653589793;
double g_big = 1e300;
double g_small = 1e-5;
double g_third = 1.0 / 3.0;
double g_dneg = -123456.789;
int8_t g_i8 = 65;
uint8_t g_u8 = 66;
int16_t g_i16 = -300;
uint32_t g_u32 = 0xdeadbeef;
int64_t g_i64 = -1;
uint64_t g_u64 = 0x123456789abcdefULL;

char g_str[16] = "hello";
char g_full[5] = {'a', 'b', 'c', 'd', 'e'};
char g_escapes[8] = "a\tb\"c\\";
char g_empty_str[4] = "";
char g_repeats[32] = "xxxxxxxxxxxxxxxxxxxxyz";
unsigned char g_ubytes[4] = {1, 2, 250, 0};
char g_long_str[300] =
    "0123456789012345678901234567890123456789012345678901234567890123456789"
    "0123456789012345678901234567890123456789012345678901234567890123456789"
    "0123456789012345678901234567890123456789012345678901234567890123456789"
    "012345678901234567890123456789";
const char *g_msg = "hello, world";
const char *g_null_str = 0;
char *g_mut_str = g_str;

int g_arr[5] = {1, 2, 3, 4, 5};
int g_zeros[20];
int g_runs[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 1, 2, 2, 3};
int g_2d[2][3] = {{1, 2, 3}, {4, 5, 6}};
matrix_t g_matrix = {{9, 8, 7}, {6, 5, 4}};
int g_big_arr[250] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                      21, 22, 23, 24, 25, 26, 27, 28, 29, 30};
double g_darr[3] = {0.5, 1.25, -2.0};
short g_sarr[4] = {-1, 0, 1, 32767};

struct point g_pt = {1, 2};
point_t g_pt2 = {3, 4};
struct point g_pts[3] = {{1, 2}, {3, 4}, {5, 6}};
struct outer g_outer = {{10, 20}, {30, 'z'}, {7, 8, 9}, "outer", 0.25};
union u g_u = {.i = 0x41424344};
enum color g_color = GREEN;
enum color g_color_bad = (enum color)7;
enum flags g_flags = (enum flags)(F_A | F_C);
enum flags g_flag_one = F_B;
enum flags g_flag_zero = (enum flags)0;
enum flags g_flag_unknown = (enum flags)(F_A | 8);
enum negs g_negs = NEG;
struct bits g_bits = {5, -3, 1, 100, 12345, -1000};
struct empty_arr g_ea = {3, "ab"};

int *g_ptr = &g_int;
int *g_nullptr = 0;
void *g_vptr = &g_int;
struct point *g_ppt = &g_pt;
int **g_pp = &g_ptr;
int *g_arr_ptr = &g_arr[2];
binop_t g_fn = add;
int (*g_fn2)(int, int) = factorial == 0 ? 0 : add;
int (*g_fact)(int) = factorial;
int (*g_twice)(int) = twice;
int (*g_pa)[3] = g_2d;
int *g_ap[2] = {&g_arr[0], &g_arr[1]};
struct with_ptrs g_wp = {&g_int, "member", add, 0};
uint_t g_typedef_uint = 7;
const int g_const = 5;
volatile int g_vol = 6;
const char *const g_cc = "const";
static int s_file_static = 99;
struct anon_holder g_anon = {1, {2}, {3}};
struct repeat_edges g_edges;
long double g_ldouble = 1.5L;
long double g_ldpi = 3.14159265358979323846L;
char g_ctrl[6] = "\033\a\001\177";
int g_neg_arr[3] = {-1, -1, -1};
#define R10(b) b + 0, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9
#define R100(b) R10(b), R10(b + 10), R10(b + 20), R10(b + 30), R10(b + 40), R10(b + 50), \
                R10(b + 60), R10(b + 70), R10(b + 80), R10(b + 90)
int g_seq[210] = {R100(0), R100(100), R10(200)};
struct flex g_flex = {2};
struct incomplete* g_inc = (struct incomplete*)16;
struct bf g_bf = {BLUE, true, 9};
struct packed g_packed = {'a', 0x12345678, -2};
void (*g_fps[2])(void) = {no_args, 0};
double g_negz = -0.0;
float g_denorm = 1e-40f;
double g_nan_inf[2] = {__builtin_inf(), -__builtin_inf()};

int main(void) {
    /* Reference everything so that nothing is discarded. */
    return g_int + s_file_static + twice(1) + sum_all(0) + (g_fn2 != 0) - 142 + g_vol - 6 +
           g_const - 5;
}
