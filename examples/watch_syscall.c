// watch_syscall: system calls that write a watched page (tests/e2e/watch_syscall.cpp).
// Writes "hi" and then the int 4242 into a pipe; reads "hi" with read(2) into `neighbour`
// (on the page of `received`, not watched), then the int into the watched global `received`
// (LINE-MARK read_received), then copies it with a plain store into `copied`. Prints what
// each read(2) returned: a debugger that write-protects the page must not make it fail
// ("read ... failed: Bad address").
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct page_data {
    int received;        // watched
    char neighbour[12];  // same page, written by read(2), not watched
};
struct page_data data __attribute__((aligned(64)));
int copied;

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fds[2];
    if (pipe(fds) != 0) {
        return 1;
    }
    int value = 4242;
    write(fds[1], "hi", 3);
    write(fds[1], &value, sizeof value);
    ssize_t n = read(fds[0], data.neighbour, 3);  // LINE-MARK: read_neighbour
    if (n < 0) {
        printf("read neighbour failed: %s\n", strerror(errno));
    } else {
        printf("read neighbour %zd: %s\n", n, data.neighbour);
    }
    n = read(fds[0], &data.received, sizeof data.received);  // LINE-MARK: read_received
    if (n < 0) {
        printf("read received failed: %s\n", strerror(errno));
    } else {
        printf("read received %zd: %d\n", n, data.received);
    }
    copied = data.received;  // LINE-MARK: copy
    printf("copied %d\n", copied);
    return 0;
}
