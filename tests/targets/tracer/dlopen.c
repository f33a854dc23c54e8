/* Loads libm at run time (after main starts) and calls cos through it. */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) void before_dlopen(void) { __asm__ volatile("" ::: "memory"); }

int main(void) {
    before_dlopen();
    void* h = dlopen("libm.so.6", RTLD_NOW);
    if (!h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    double (*c)(double) = (double (*)(double))dlsym(h, "cos");
    printf("cos(0)=%g\n", c(0.0));
    return 0;
}
