// dwarf_units: unit b (its own namespace, another `step`, the inline helpers again).
#include "units.hpp"

namespace only_b {

int helper(int x) {
    return shapes::square(x) + shapes::twice(x);
}

}  // namespace only_b

static int step(int x) {
    return x + 3;
}

int b_work(int x) {
    return only_b::helper(x) + step(x);
}
