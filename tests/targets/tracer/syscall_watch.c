/* System calls that write a watched page. A worker thread makes system calls in a loop
   (getppid(), checked: a call the debugger broke would return something else) until main
   is done. Main sends the int 77 and "hi" through a pipe, then read(2)s the int into the
   global `received` (watched by the tests) and "hi" into `neighbour` (same page, not
   watched), and prints what each read returned and what the worker saw:
   "received 4 77\nneighbour 3 hi\nworker errors=0\n". */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct page_data {
    int received;
    char neighbour[12];
};
struct page_data data __attribute__((aligned(64)));
volatile int done;
long worker_errors;

static void *worker(void *arg) {
    pid_t parent = getppid();
    (void)arg;
    while (!done) {
        if (getppid() != parent) {
            worker_errors++;
        }
    }
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    int fds[2];
    if (pipe(fds) != 0) {
        return 1;
    }
    int value = 77;
    write(fds[1], &value, sizeof value);
    write(fds[1], "hi", 3);
    ssize_t n = read(fds[0], &data.received, sizeof data.received);
    printf("received %zd %d\n", n, n < 0 ? -errno : data.received);
    n = read(fds[0], data.neighbour, 3);
    printf("neighbour %zd %s\n", n, n < 0 ? strerror(errno) : data.neighbour);
    done = 1;
    pthread_join(t, NULL);
    printf("worker errors=%ld\n", worker_errors);
    return 0;
}
