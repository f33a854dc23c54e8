// vfork(2) children followed by the debugger (tests/e2e/fork_vfork_follow.cpp):
//   vfork_follow exit    vfork()s; the child calls child_step(), which adds 5 to the global
//                        `shared` (the child shares the parent's memory), and _exit(7)s
//   vfork_follow exec    the same, then the child execs this program as `vfork_follow image`
//   vfork_follow image   prints "image N" (its pid) and exits 3
// The parent waits and prints "parent: child exited S, shared H": S the child's exit
// code, H the value of `shared` the child left in the memory they shared, read through
// child_step(0) (a parent left with a debugger's int3 there would die of SIGTRAP).
// Output is unbuffered; each line names the process that printed it.
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int shared;

int child_step(int x) {
    shared += x;  // LINE-MARK: child_step
    return shared;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (strcmp(mode, "image") == 0) {
        printf("image %d\n", (int)getpid());  // LINE-MARK: image_print
        return 3;
    }
    int do_exec = strcmp(mode, "exec") == 0;
    pid_t pid = vfork();  // LINE-MARK: vfork
    if (pid == 0) {
        child_step(5);  // LINE-MARK: child_call
        if (do_exec) {
            execl(argv[0], argv[0], "image", (char *)NULL);  // LINE-MARK: child_exec
        }
        _exit(7);  // LINE-MARK: child_exit
    }
    int status = 0;
    waitpid(pid, &status, 0);  // LINE-MARK: parent_wait
    printf("parent: child exited %d, shared %d\n", WEXITSTATUS(status), child_step(0));  // LINE-MARK: parent_print
    return 0;
}
