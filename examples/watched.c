/* watched: variables for watchpoints. `hot.counter` changes 4 times while its neighbour on
 * the same page, `hot.neighbour`, is written on every iteration of a loop of ITERATIONS
 * (argv[1], default 100000) — a software watchpoint takes a page fault for each. Then a
 * read of `read_me`, a local that lives only in local_scope(), a write by a second thread,
 * and (with argv[2] == "crash") a real SIGSEGV. Prints what it computed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hot_data {
    long counter;    /* watched */
    long neighbour;  /* same cache line, same page: written in the hot loop */
};
struct hot_data hot __attribute__((aligned(64)));
int read_me = 7;
struct wide_data {
    long a, b, c;
} wide = {1, 2, 3};
char small = 'a';
short halfword = 1;
int sink;

void bump(long *p) {
    *p += 1; /* LINE-MARK: bump */
}

static void *thread_main(void *arg) {
    (void)arg;
    hot.counter = 1000; /* LINE-MARK: thread_write */
    return NULL;
}

int local_scope(int n) {
    int local = n; /* LINE-MARK: local_init */
    local = local * 2; /* LINE-MARK: local_double */
    return local; /* LINE-MARK: local_return */
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    for (long i = 0; i < iterations; ++i) {
        hot.neighbour += i; /* LINE-MARK: hot_loop */
        if (i % 25000 == 0) {
            bump(&hot.counter); /* LINE-MARK: call_bump */
        }
    }
    sink = read_me; /* LINE-MARK: read */
    small = 'b';
    halfword = 2;
    int doubled = local_scope(21); /* LINE-MARK: call_local */
    pthread_t t;
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, NULL);
    printf("counter %ld neighbour %ld sink %d doubled %d\n", hot.counter, hot.neighbour, sink, doubled);
    fflush(stdout);
    if (argc > 2 && strcmp(argv[2], "crash") == 0) {
        *(volatile int *)16 = 1; /* LINE-MARK: crash */
    }
    return 0;
}
