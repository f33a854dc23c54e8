/* watched_wide: software watchpoints wider than 8 bytes, and what else may touch a guarded
 * page. Prints what it computed.
 *   watched_wide         `arr` (8 ints, 32 bytes) gets arr[5] = 5 then arr[0] = 10; `box`
 *                        (a struct of 24 bytes) gets box.c = 3
 *   watched_wide read    read(2) of 16 bytes from a pipe into `buf` (16 chars)
 *   watched_wide vfork   a vfork child writes `page.beside` (on the page of `page.watched`)
 *                        and exits 3; then the parent writes page.watched[1] */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct box_t {
    long a, b, c;
};
int arr[8];
struct box_t box;
char buf[16];
struct {
    int watched[8];
    int beside;
} page;

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "write";
    if (strcmp(mode, "write") == 0) {
        arr[5] = 5;  /* LINE-MARK: arr_5 */
        arr[0] = 10; /* LINE-MARK: arr_0 */
        box.c = 3;   /* LINE-MARK: box_c */
        printf("arr %d %d box %ld\n", arr[5], arr[0], box.c);
        return 0;
    }
    if (strcmp(mode, "read") == 0) {
        int fds[2];
        if (pipe(fds) != 0 || write(fds[1], "0123456789abcdef", 16) != 16) {
            return 1;
        }
        ssize_t n = read(fds[0], buf, sizeof buf); /* LINE-MARK: read_call */
        printf("read %zd %.16s\n", n, n > 0 ? buf : "(failed)");
        return 0;
    }
    if (strcmp(mode, "vfork") == 0) {
        pid_t pid = vfork();
        if (pid == 0) {
            page.beside = 1;
            _exit(3);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status)) {
            printf("vfork child exited %d beside %d\n", WEXITSTATUS(status), page.beside);
        } else {
            printf("vfork child killed by signal %d\n", WTERMSIG(status));
        }
        page.watched[1] = 1; /* LINE-MARK: after_vfork */
        printf("watched[1] %d\n", page.watched[1]);
        return 0;
    }
    return 1;
}
