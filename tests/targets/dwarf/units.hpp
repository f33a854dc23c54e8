// dwarf_units: a program of three units, for the per-unit name lookups (unit_filter).
#pragma once

namespace shapes {

template <typename T>
T twice(T v) {
    return v * 2;
}

inline int square(int x) {
    return x * x;
}

struct box {
    int w;
    int h;
    int area() const;
    int perimeter() const { return twice(w + h); }
};

}  // namespace shapes

int a_work(int x);
int b_work(int x);
