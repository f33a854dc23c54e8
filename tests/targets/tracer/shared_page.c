/* A page of shared memory (MAP_SHARED: another process may write it while this one is
   stopped) beside private memory: `bulk` (64 private pages) and `marker`. tick() is where
   the memory tests stop. */
#include <stdio.h>
#include <sys/mman.h>

volatile unsigned long marker = 0x1122334455667788UL;
volatile unsigned long* shared_word;
char bulk[64 * 4096];

__attribute__((noinline)) void tick(void) { bulk[0]++; }

int main(void) {
    void* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        return 1;
    }
    shared_word = page;
    *shared_word = 7;
    for (int i = 0; i < 64; ++i) {
        bulk[i * 4096] = (char)i;
    }
    tick();
    tick();
    printf("shared=%lu marker=%#lx\n", *shared_word, marker);
    return 0;
}
