/* Call chains for the unwinder tests: main -> a -> b -> c, recursion to a known depth, the
 * same chain on a second thread (or on N threads parked in hold(): "many N", breakpoint all_parked), and c called from a signal
 * handler. Every test stops at c
 * (the tests plant a breakpoint there, as `gdb -ex 'break c'` does). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int sink;

static int many_mode;
static pthread_barrier_t many_barrier;
static pthread_mutex_t many_mutex = PTHREAD_MUTEX_INITIALIZER;

/* "many" mode: every thread parks here (b -> hold) until the process is killed. */
__attribute__((noinline)) void hold(void) {
    if (many_mode) {
        pthread_barrier_wait(&many_barrier);
        pthread_mutex_lock(&many_mutex);
        sink++; /* not a tail call: hold stays on the stack */
    }
}

/* The "many" tests' breakpoint: every thread is parked in hold(). */
__attribute__((noinline)) void all_parked(void) { sink = -1; }

__attribute__((noinline)) void c(int x) { sink = x; }
__attribute__((noinline)) void b(int x) {
    c(x + 1);
    hold();
    sink++;
}
__attribute__((noinline)) void a(int x) { b(x + 1); sink++; }

/* Not a tail call: the store after the call keeps every level on the stack. */
__attribute__((noinline)) int recurse(int n) {
    if (n == 0) {
        c(100);
        return 0;
    }
    int r = recurse(n - 1);
    sink += r;
    return r + 1;
}

__attribute__((noinline)) void handler(int sig) {
    c(sig);
    sink++;
}

__attribute__((noinline)) void *thread_main(void *arg) {
    a(10);
    return arg;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "chain";
    if (strcmp(mode, "chain") == 0) {
        a(0);
    } else if (strcmp(mode, "recurse") == 0) {
        recurse(argc > 2 ? atoi(argv[2]) : 20);
    } else if (strcmp(mode, "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thread_main, NULL);
        pthread_join(t, NULL);
    } else if (strcmp(mode, "many") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 256;
        pthread_t *t = calloc((size_t)n, sizeof *t);
        many_mode = 1;
        pthread_mutex_lock(&many_mutex);
        pthread_barrier_init(&many_barrier, NULL, (unsigned)n + 1);
        for (int i = 0; i < n; ++i) {
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, 64 * 1024);
            pthread_create(&t[i], &attr, thread_main, NULL);
            pthread_attr_destroy(&attr);
        }
        pthread_barrier_wait(&many_barrier);
        all_parked();
        for (int i = 0; i < n; ++i) {
            pthread_join(t[i], NULL);
        }
        free(t);
    } else if (strcmp(mode, "clock") == 0) {
        /* Spins in the vdso's clock_gettime until killed. */
        struct timespec ts;
        c(0);
        for (;;) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            sink += (int)ts.tv_nsec;
        }
    } else if (strcmp(mode, "signal") == 0) {
        signal(SIGUSR1, handler);
        kill(getpid(), SIGUSR1);
    }
    printf("done %d\n", sink);
    return 0;
}
