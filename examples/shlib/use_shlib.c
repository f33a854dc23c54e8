/* use_shlib: prints "loading <lib>", then dlopen()s libshapes (SHAPES_LIB, found through
 * this executable's RUNPATH $ORIGIN) and calls shape_area through dlsym. A pending
 * breakpoint on shape_area is resolved when the library is mapped. */
#include <dlfcn.h>
#include <stdio.h>

#include "shapes.h"

#ifndef SHAPES_LIB
#define SHAPES_LIB "libshapes.so"
#endif

int main(void) {
    printf("loading %s\n", SHAPES_LIB); /* LINE-MARK: before_dlopen */
    fflush(stdout);
    void *lib = dlopen(SHAPES_LIB, RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "use_shlib: %s\n", dlerror());
        return 1;
    }
    int (*area)(const struct shape *) = (int (*)(const struct shape *))dlsym(lib, "shape_area");
    if (area == NULL) {
        fprintf(stderr, "use_shlib: %s\n", dlerror());
        return 1;
    }
    struct shape tri = {2, 6, 4};
    int a = area(&tri); /* LINE-MARK: call_area */
    printf("triangle area %d\n", a);
    dlclose(lib);
    printf("unloaded\n");
    return 0;
}
