/* Workload 7: a buffer of N MiB (argv[1], default 64), filled, then ready() is called with
 * it: the debugger dumps [buf, buf+size) to a file there. With a second argument "wait" the
 * program prints "ready PID BUF SIZE" and waits for its stdin to close instead (for the raw
 * process_vm_readv reference). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char* buf;
unsigned long size;

__attribute__((noinline)) void ready(void) {
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
    size = (unsigned long)(argc > 1 ? atol(argv[1]) : 64) << 20;
    buf = malloc(size);
    if (!buf) {
        return 1;
    }
    for (unsigned long i = 0; i < size; ++i) {
        buf[i] = (char)(i * 131);
    }
    if (argc > 2 && strcmp(argv[2], "wait") == 0) {
        printf("ready %d %p %lu\n", (int)getpid(), (void*)buf, size);
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0) {
        }
        return 0;
    }
    ready();
    printf("bench-done bytes=%lu\n", size);
    return 0;
}
