/* A team of 8 that hangs: thread 3 blocks in read() on a pipe nobody writes, the other 7
 * threads wait in the barrier below forever. Thread 3 first waits until the kernel shows
 * every other thread asleep in futex (the runtime's barrier sleep), so when it prints
 * "truth: held ..." the 7 threads are in the barrier: a test can attach right then.
 * With HANG_SPIN=1 in the environment (and KMP_BLOCKTIME=infinite, so that the barrier
 * never sleeps) thread 3 instead waits until every other thread arrived at the barrier and
 * then used 100 ms of CPU time more: they busy-wait in it.
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
static atomic_int arrived;
static int never[2];

/* The first line of /proc/self/task/TID/WHAT in buf; 0 when it cannot be read. */
static int task_line(int tid, const char* what, char* buf, int size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, what);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    int ok = fgets(buf, size, f) != NULL;
    fclose(f);
    return ok;
}

/* The syscall a thread is blocked in (/proc/self/task/TID/syscall's first field), or -1. */
static long blocked_syscall(int tid) {
    char buf[256];
    if (!task_line(tid, "syscall", buf, sizeof buf) || strcmp(buf, "running\n") == 0) {
        return -1;
    }
    return strtol(buf, NULL, 10);
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

/* utime + stime of a thread of this process, in clock ticks, or -1. */
static long cpu_ticks(int tid) {
    char buf[1024];
    if (!task_line(tid, "stat", buf, sizeof buf)) {
        return -1;
    }
    char* p = strrchr(buf, ')');
    long utime = 0, stime = 0;
    if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) != 2) {
        return -1;
    }
    return utime + stime;
}

static void wait_until_others_spin(void) {
    while (atomic_load(&arrived) < TEAM - 1) {
        usleep(1000);
    }
    long start[TEAM];
    for (int i = 0; i < TEAM; ++i) {
        start[i] = i == ODD ? 0 : cpu_ticks(atomic_load(&tids[i]));
    }
    for (;;) {
        int spinning = 0;
        for (int i = 0; i < TEAM; ++i) {
            spinning += i != ODD && cpu_ticks(atomic_load(&tids[i])) >= start[i] + 10;
        }
        if (spinning == TEAM - 1) {
            return;
        }
        usleep(1000);
    }
}

int main(void) {
    const char* spin = getenv("HANG_SPIN");
    int spin_wait = spin != NULL && strcmp(spin, "1") == 0;
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
            if (spin_wait) {
                wait_until_others_spin();
            } else {
                wait_until_others_sleep();
            }
            TRUTH("held team_size=%d odd_thread=%d odd_tid=%d", omp_get_num_threads(), ODD, (int)syscall(SYS_gettid));
            char c;
            ssize_t n = read(never[0], &c, 1); /* LINE-MARK: odd-read */
            (void)n;
        }
        if (me != ODD) {
            atomic_fetch_add(&arrived, 1);
        }
#pragma omp barrier /* LINE-MARK: barrier */
    }
    return 0;
}
