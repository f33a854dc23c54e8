/* Forks N children (argv[1], default 64) one after the other without waiting in between;
   each child calls tick() (a breakpoint site in the parent's copy) and exits with 3. Then
   the parent reaps them with a deadline of 60 s and prints "reaped R of N" and how many
   ended with 3: a child the debugger left in its first ptrace stop never ends. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile int ticks;

__attribute__((noinline)) void tick(void) { ticks++; }

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int n = argc > 1 ? atoi(argv[1]) : 64;
    for (int i = 0; i < n; ++i) {
        pid_t c = fork();
        if (c < 0) {
            perror("fork");
            return 2;
        }
        if (c == 0) {
            tick();
            _exit(3);
        }
    }
    int reaped = 0, threes = 0;
    time_t deadline = time(NULL) + 60;
    while (reaped < n && time(NULL) < deadline) {
        int st = 0;
        pid_t r = waitpid(-1, &st, WNOHANG);
        if (r > 0) {
            ++reaped;
            threes += WIFEXITED(st) && WEXITSTATUS(st) == 3;
        } else {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
    }
    printf("reaped %d of %d, %d exited with 3\n", reaped, n, threes);
    return reaped == n ? 0 : 1;
}
