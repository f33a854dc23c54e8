/* linked_shlib: linked against libshapes at build time (DT_NEEDED, RUNPATH $ORIGIN). */
#include <stdio.h>

#include "shapes.h"

int main(void) {
    struct shape sq = {0, 5, 5};
    struct shape rect = {1, 3, 7};
    int a = shape_area(&sq); /* LINE-MARK: call_square */
    int b = shape_area(&rect);
    printf("square area %d rectangle area %d calls %d\n", a, b, shape_calls);
    return 0;
}
