// dwarf_units: main unit.
#include <cstdio>

#include "units.hpp"

static int step(int x) {
    return x + 1;
}

int main(int argc, char**) {
    shapes::box b{argc, 2};
    int total = a_work(argc) + b_work(argc) + step(argc) + b.perimeter() + shapes::square(argc);
    std::printf("units total=%d\n", total);
    return 0;
}
