/* libshapes.so: built per compiler and DWARF version (libshapes-<cc>-dwarf<V>.so). */
#include "shapes.h"

int shape_calls = 0;
static int scale_factor = 1; /* a file static of the library */

int shape_area(const struct shape *s) {
    ++shape_calls; /* LINE-MARK: shape_area_body */
    int base = s->width * s->height * scale_factor;
    return s->kind == 2 ? base / 2 : base; /* LINE-MARK: shape_area_return */
}
