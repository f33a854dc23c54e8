/* A team of 8 that hangs: thread 3 blocks in read() on a pipe nobody writes, the other 7
 * threads wait in the barrier below forever. Thread 3 first waits until the kernel shows
 * every other thread asleep in futex (the runtime's barrier sleep), so when it prints
 * "truth: held ..." the 7 threads are in the barrier: a test can attach right then.
 * It prints its ground truth: pid, the barrier's line, the odd thread's line, team size. */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "omp_common.h"

#define TEAM 8
#define ODD 3

static atomic_int tids[TEAM];
static int never[2];

/* The syscall a thread is blocked in (/proc/self/task/TID/syscall's first field), or -1. */
static long blocked_syscall(int tid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    long nr = -1;
    if (fgets(buf, sizeof buf, f) != NULL && strcmp(buf, "running\n") != 0) {
        nr = strtol(buf, NULL, 10);
    }
    fclose(f);
    return nr;
}

static void wait_until_others_sleep(void) {
    for (;;) {
        int asleep = 0;
        for (int i = 0; i < TEAM; ++i) {
            int tid = atomic_load(&tids[i]);
            asleep += i != ODD && tid != 0 && blocked_syscall(tid) == SYS_futex;
        }
        if (asleep == TEAM - 1) {
            return;
        }
        usleep(1000);
    }
}

int main(void) {
    if (pipe(never) != 0) {
        return 1;
    }
    TRUTH("pid=%d", (int)getpid());
    omp_checkpoint(0);
#pragma omp parallel num_threads(TEAM) /* LINE-MARK: region */
    {
        int me = omp_get_thread_num();
        atomic_store(&tids[me], (int)syscall(SYS_gettid));
        if (me == ODD) {
            wait_until_others_sleep();
            TRUTH("held team_size=%d odd_thread=%d odd_tid=%d", omp_get_num_threads(), ODD, (int)syscall(SYS_gettid));
            char c;
            ssize_t n = read(never[0], &c, 1); /* LINE-MARK: odd-read */
            (void)n;
        }
#pragma omp barrier /* LINE-MARK: barrier */
    }
    return 0;
}
