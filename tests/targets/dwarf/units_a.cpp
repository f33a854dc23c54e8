// dwarf_units: unit a (a method of a class declared in the header, a static `step`).
#include "units.hpp"

static int step(int x) {
    return x + 2;
}

int shapes::box::area() const {
    return w * h;
}

int a_work(int x) {
    shapes::box b{x, 3};
    return step(x) + b.area() + shapes::twice(x) + shapes::twice(1.5) > 0 ? 1 : 0;
}
