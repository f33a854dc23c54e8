// cxx_features: C++ for the debugger without the weight of libstdc++ containers:
// a namespace and a class with methods, lvalue and const references, overloads
// (`area(int)`, `area(double)`), a template instantiated for int and double, an inline
// function that -O2 inlines, a class with a static member. Deterministic output.
// Keep line numbers stable: tests break on the LINE-MARK lines.
#include <cstdio>

namespace geometry {

class shape {
public:
    shape(int id, double scale) : id_(id), scale_(scale) { ++instances; }
    int id() const { return id_; }
    double scaled(double v) const {
        return v * scale_; // LINE-MARK: scaled_body
    }
    void grow(double by) { scale_ += by; }

    static int instances; // class static member

private:
    int id_;
    double scale_;
};

int shape::instances = 0;

// Overloads: a breakpoint on `area` gets a location in each.
int area(int side) {
    return side * side; // LINE-MARK: area_int
}

double area(double radius) {
    return 3.0 * radius * radius; // LINE-MARK: area_double
}

}  // namespace geometry

// A template instantiated for two types: `break largest` gets two locations.
template <typename T>
T largest(const T* values, int count) {
    T best = values[0];
    for (int i = 1; i < count; ++i) {
        if (values[i] > best) {
            best = values[i]; // LINE-MARK: largest_update
        }
    }
    return best;
}

// Inlined into main at -O2 (and still an out-of-line function at -O0). The volatile
// store keeps -O2 from folding the calls away, so the inlined copies stay in the DWARF.
volatile int twice_seen;
static inline int twice(int v) {
    twice_seen = v; // LINE-MARK: twice_body
    return v + v;
}

// References: `info args` shows `(int &) @0x...: 5` and `(const geometry::shape &)`.
void bump(int& counter, const geometry::shape& s) {
    counter += s.id(); // LINE-MARK: bump_body
}

int main(int argc, char**) {
    geometry::shape square(7, 1.5); // LINE-MARK: main_start
    geometry::shape circle(3, 0.5);
    int counter = 4 + argc; // 5 without arguments (from argc so -O2 cannot fold it)
    int& counter_ref = counter;
    const geometry::shape& circle_ref = circle;
    int ints[] = {4, 9, 2, 7};
    double doubles[] = {1.5, 0.25, 8.75};

    bump(counter_ref, circle_ref); // LINE-MARK: call_bump
    int a1 = geometry::area(3 + argc);
    double a2 = geometry::area(1.0 + argc);
    int li = largest(ints, 4);
    double ld = largest(doubles, 3);
    square.grow(0.5);
    double sc = square.scaled(10.0);
    int tw = 0;
    for (int i = 0; i < 3; ++i) {
        tw += twice(i + counter); // LINE-MARK: call_twice
    }

    std::printf("counter %d area %d %.2f largest %d %.2f scaled %.2f twice %d instances %d\n",
                counter, a1, a2, li, ld, sc, tw, geometry::shape::instances);
    return 0; // LINE-MARK: main_return
}
