/* vfork()s; the child, sharing the parent's memory, calls tick() twice and _exit(3)s; the
   parent waits, calls tick() once more and prints "status=3 ticks=3" (the child's ticks are
   in the shared memory). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int ticks;

__attribute__((noinline)) void tick(void) { ticks++; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t c = vfork();
    if (c == 0) {
        tick();
        tick();
        _exit(3);
    }
    int st = 0;
    waitpid(c, &st, 0);
    tick();
    printf("status=%d ticks=%d\n", WEXITSTATUS(st), ticks);
    return 0;
}
