/* libshapes: a tiny shared library for shared-library tests. */
#ifndef SHAPES_H
#define SHAPES_H

struct shape {
    int kind;    /* 0: square, 1: rectangle, 2: triangle */
    int width;
    int height;
};

/* Area of `s` (integer). Pending-breakpoint tests break here. */
int shape_area(const struct shape *s);
/* Number of calls of shape_area so far (a global of the library). */
extern int shape_calls;

#endif
