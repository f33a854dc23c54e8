// fork(2)/vfork(2) under next, step and finish (tests/e2e/fork_steps.cpp):
//   fork_steps [fork|vfork]   spawn() forks (or vforks); the child calls child_work(),
//                             where the tests plant a breakpoint in the parent, and exits 0
//                             when it returns 5; the parent prints "child status S" with
//                             S = 100 + the child's exit code, or the number of the signal
//                             that killed it (5 for SIGTRAP: an int3 of the debugger left in
//                             the child's memory).
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int counter;

int child_work(int x) {
    counter += x;  // LINE-MARK: child_work
    return counter;
}

int spawn(int use_vfork) {
    pid_t pid = use_vfork ? vfork() : fork();  // LINE-MARK: spawn_fork
    if (pid == 0) {                             // LINE-MARK: spawn_if
        _exit(child_work(5) == 5 ? 0 : 1);
    }
    int status = 0;  // LINE-MARK: spawn_status
    waitpid(pid, &status, 0);  // LINE-MARK: spawn_wait
    return WIFEXITED(status) ? 100 + WEXITSTATUS(status) : WTERMSIG(status);  // LINE-MARK: spawn_return
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int use_vfork = argc > 1 && strcmp(argv[1], "vfork") == 0;
    int r = spawn(use_vfork);  // LINE-MARK: main_spawn
    printf("child status %d\n", r);  // LINE-MARK: main_print
    return 0;
}
