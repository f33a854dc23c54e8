/* Calls tick() in the parent, forks a child that calls tick() three more times (it prints 4), waits for it,
   then posix_spawn()s /bin/echo (a vfork-style clone that calls execve) and waits again. */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;
volatile int ticks;

__attribute__((noinline)) void tick(void) { ticks++; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    tick();
    pid_t c = fork();
    if (c == 0) {
        tick();
        tick();
        tick();
        printf("child ticks=%d\n", ticks);
        _exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    printf("fork child status=%d\n", st);
    char* argv[] = {"/bin/echo", "spawned", NULL};
    pid_t s;
    if (posix_spawn(&s, "/bin/echo", NULL, NULL, argv, environ) != 0) return 2;
    waitpid(s, &st, 0);
    printf("spawn child status=%d\n", st);
    tick();
    printf("parent ticks=%d\n", ticks);
    return 0;
}
