/* soak_counter: the program of `make soak`'s attach cycles (bench/soak). A producer thread
 * hands the numbers 0, 1, 2, ... one at a time to main through a one-slot mailbox (mutex +
 * condition variable) and main prints each as "counter N", so the sequence goes on only
 * while both threads run, and a number lost or repeated by a debugger shows as a gap or a
 * repeat. Three more threads sit in the other states a debugger must stop and resume: one
 * sleeps in nanosleep, one spins on the CPU, one blocks in read() on a pipe nobody writes.
 * A system call that fails other than by EINTR ends the program with "error: ..." on
 * stdout. It prints "pid P threads 5" first, then runs until killed. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long slot = -1;            /* the number handed over; -1 when main has taken it */
static volatile long spins;       /* the spinner's work, for `print spins` */
static int never_written[2];

static void fail(const char* what, int err) {
    printf("error: %s: %s\n", what, strerror(err));
    fflush(stdout);
    exit(1);
}

static void nap(long ns) {
    struct timespec ts = {0, ns};
    /* A ptrace stop may end a sleep early (EINTR): sleep the rest. */
    while (nanosleep(&ts, &ts) != 0) {
        if (errno != EINTR) {
            fail("nanosleep", errno);
        }
    }
}

static void* producer(void* arg) {
    (void)arg;
    for (long n = 0;; ++n) {
        pthread_mutex_lock(&lock);
        while (slot != -1) {
            pthread_cond_wait(&changed, &lock);
        }
        slot = n;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        nap(2 * 1000 * 1000);
    }
    return NULL;
}

static void* sleeper(void* arg) {
    (void)arg;
    for (;;) {
        nap(50 * 1000 * 1000);
    }
    return NULL;
}

static void* spinner(void* arg) {
    (void)arg;
    for (;;) {
        spins = spins + 1;
    }
    return NULL;
}

static void* reader(void* arg) {
    (void)arg;
    char c;
    for (;;) {
        ssize_t r = read(never_written[0], &c, 1);
        if (r < 0 && errno != EINTR) {
            fail("read", errno);
        }
        if (r >= 0) {
            fail("read", EIO);   /* nobody writes: data or EOF is a bug */
        }
    }
    return NULL;
}

int main(void) {
    if (pipe(never_written) != 0) {
        fail("pipe", errno);
    }
    void* (*bodies[])(void*) = {producer, sleeper, spinner, reader};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; ++i) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, bodies[i], NULL);
        if (rc != 0) {
            fail("pthread_create", rc);
        }
    }
    printf("pid %d threads 5\n", (int)getpid());
    fflush(stdout);
    for (;;) {
        pthread_mutex_lock(&lock);
        while (slot == -1) {
            pthread_cond_wait(&changed, &lock);
        }
        long n = slot;
        slot = -1;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        printf("counter %ld\n", n);
        fflush(stdout);
    }
    return 0;
}
