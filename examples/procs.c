// Process events for the catch tests:
//   procs write     one write(2) of "hello from write\n" and exits 0
//   procs fork      forks; the child prints "child N" and exits 7, the parent waits and
//                   prints "parent: child exited 7"
//   procs vfork     the same through vfork + _exit
//   procs exec      execs itself as `procs write`
// Output is unbuffered; each line names the process that printed it.
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int in_child(void) {
    printf("child %d\n", (int)getpid());  // LINE-MARK: child_print
    return 7;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "write";
    if (strcmp(mode, "write") == 0) {
        const char msg[] = "hello from write\n";
        write(1, msg, sizeof msg - 1);  // LINE-MARK: write
        return 0;
    }
    if (strcmp(mode, "fork") == 0 || strcmp(mode, "vfork") == 0) {
        pid_t pid = strcmp(mode, "fork") == 0 ? fork() : vfork();
        if (pid == 0) {
            _exit(in_child());
        }
        int status = 0;
        waitpid(pid, &status, 0);  // LINE-MARK: parent_wait
        printf("parent: child exited %d\n", WEXITSTATUS(status));  // LINE-MARK: parent_after
        return 0;
    }
    if (strcmp(mode, "exec") == 0) {
        execl(argv[0], argv[0], "write", (char *)NULL);
        perror("execl");
        return 1;
    }
    return 1;
}
