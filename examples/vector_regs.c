// Vector registers for the core-file tests: main loads a known pattern into ymm7 (both
// 128-bit halves differ, so a reader that only knows the xmm half shows the difference)
// and calls `checkpoint`, which touches no vector register. It prints the pattern.
#include <stdint.h>
#include <stdio.h>

static const int32_t pattern[8] = {0x11111111, 0x22222222, 0x33333333, 0x44444444,
                                   0x55555555, 0x66666666, 0x77777777, 0x7eadbeef};

__attribute__((noinline)) void checkpoint(void) {
    __asm__ volatile("" ::: "memory");  // LINE-MARK: checkpoint
}

int main(void) {
    __asm__ volatile("vmovdqu %0, %%ymm7" : : "m"(pattern) : "xmm7");
    checkpoint();
    for (int i = 0; i < 8; ++i) {
        printf("%#x%s", (unsigned)pattern[i], i == 7 ? "\n" : " ");
    }
    return 0;
}
