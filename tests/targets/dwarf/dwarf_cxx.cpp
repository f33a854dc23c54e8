// Test program for libdwarfview: namespaces, classes with methods defined out of line,
// static members, overloads, templates, an anonymous namespace.
#include <cstdio>

namespace geo {

int namespace_value = 5;

class shape {
public:
    explicit shape(int w) : width_(w) {}
    int area(int h) const;          // out-of-line definition below
    static int instances;
private:
    int width_;
};

int shape::instances = 0;

int shape::area(int h) const {
    return width_ * h;              // MARK: shape_area
}

namespace detail {
struct node {
    int value;
    node* next;
};
int depth(const node* n) {
    int d = 0;                      // MARK: detail_depth
    for (; n != nullptr; n = n->next) ++d;
    return d;
}
}  // namespace detail

}  // namespace geo

__attribute__((noinline)) int area(int side) {
    return side * side;             // MARK: area_int
}

__attribute__((noinline)) double area(double side) {
    return side * side;             // MARK: area_double
}

template <typename T>
__attribute__((noinline)) T biggest(T a, T b) {
    return a > b ? a : b;           // MARK: biggest
}

namespace {
__attribute__((noinline)) int hidden(int v) {
    return v + 1;                   // MARK: hidden
}
}  // namespace

int main() {
    geo::shape s(3);
    geo::shape::instances++;
    geo::detail::node n2{2, nullptr};
    geo::detail::node n1{1, &n2};
    int total = s.area(4) + area(2) + (int)area(1.5) + biggest(1, 2) + (int)biggest(1.0, 2.5);
    total += hidden(geo::namespace_value) + geo::detail::depth(&n1);   // MARK: main_total
    std::printf("%d\n", total);
    return 0;
}
