// C++ globals with known values: namespaces, classes, inheritance, references, static
// members, enum classes, bool. Compared with gdb's print/ptype/whatis on this binary.
#include <cstdint>

namespace geo {
struct point {
    int x;
    int y;
};
enum class shape { circle = 1, square = 2, triangle = 3 };
namespace detail {
int depth = 3;
}
int counter = 17;
}  // namespace geo

struct base {
    int id;
};
struct derived : base {
    double weight;
    bool active;
};
class klass {
public:
    int a;
    static int instances;
    int get() const { return a; }

private:
    long hidden;
};
int klass::instances = 4;

enum plain { P_ONE = 1, P_TWO = 2 };

union number {
    int i;
    float f;
};

struct holder {
    int& ref;
    const geo::point* pp;
};

int g_value = 5;
int& g_ref = g_value;
const int& g_cref = g_value;
geo::point g_point = {7, 8};
geo::point* g_ppoint = &g_point;
geo::shape g_shape = geo::shape::square;
derived g_derived = {{11}, 1.5, true};
klass g_klass = klass();
plain g_plain = P_TWO;
bool g_flag = true;
number g_number = {65};
holder g_holder = {g_value, &g_point};
char16_t g_c16 = u'x';
char32_t g_c32 = U'y';
wchar_t g_wc = L'z';
char16_t g_s16[4] = u"hi";
wchar_t g_ws[6] = L"wide";
char32_t g_smile = 0x1F600;
std::int64_t g_big = -5;
const char* g_text = "text";
int g_arr[4] = {1, 2, 3, 4};

int twice(int v) { return 2 * v; }
int twice(double v) { return static_cast<int>(3 * v); }

int main() {
    g_klass.a = 9;
    return g_klass.get() + twice(1) + twice(1.0) + geo::detail::depth + geo::counter +
           klass::instances - 40;
}
