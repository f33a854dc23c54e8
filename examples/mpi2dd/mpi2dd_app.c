/* A rank program of the reference MPI2DD starter (mpi2dd-run). Every rank prints one
 * MPI2DD-LOG line about itself (the tests' ground truth), then does what its arguments ask:
 *   --spawn N      rank 0 spawns N new processes of this program (a new comm world)
 *   --abort        rank 1 calls mpi2dd_abort()
 *   --crash        rank 1 dereferences a null pointer (SIGSEGV)
 *   --accept PORT / --connect PORT / --join PORT   rank 0 connects this job to another
 *   --wait-for-debugger   every rank waits (up to a minute) until a debugger traces it
 *   --forever      every rank prints "MPI2DD-LOG rank=R world=W running" and runs until killed
 * With --abort the other ranks wait for the end of the job (as in a barrier).

 * and ends with compute() and a final MPI2DD-LOG "done" line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi2dd_rank.h"

volatile int g_result = 0;

/* Where the tests break: every rank reaches it after MPI2DD start-up. */
int compute(int rank) {
    int sum = 0;
    for (int i = 0; i <= rank; ++i) {
        sum += i;   /* LINE-MARK: mpi2dd-compute */
    }
    g_result = sum;
    return sum;
}

void crash_here(int rank) {
    volatile int* p = NULL;
    if (rank == 1) {
        *p = 42;   /* LINE-MARK: mpi2dd-crash */
    }
}

/* Whether a debugger traces this process (TracerPid of /proc/self/status). */
static int traced(void) {
    FILE* f = fopen("/proc/self/status", "r");
    char line[256];
    int pid = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "TracerPid: %d", &pid) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return pid != 0;
}

static void wait_for_debugger(void) {
    for (int i = 0; i < 6000 && !traced(); ++i) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    if (!traced()) {
        fprintf(stderr, "mpi2dd_app: no debugger came\n");
        exit(4);
    }
}

/* --forever: busy with something until the end of time (or a kill). */
void run_forever(int rank) {
    printf("MPI2DD-LOG rank=%d world=%s running\n", rank, mpi2dd_world());
    fflush(stdout);
    for (;;) {
        g_result += compute(rank);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

/* The other ranks of an aborting job wait here until the starter ends them. */
void wait_in_barrier(void) {
    for (;;) {
        pause();
    }
}

int main(int argc, char** argv) {
    if (mpi2dd_init() != 0) {
        fprintf(stderr, "%s: not started by mpi2dd-run\n", argv[0]);
        return 2;
    }
    int rank = mpi2dd_rank();
    const char* parent = mpi2dd_parent_world();
    printf("MPI2DD-LOG rank=%d size=%d world=%s pid=%d ppid=%d parent=%s:%d seq=%d\n", rank, mpi2dd_size(),
           mpi2dd_world(), (int)getpid(), (int)getppid(), parent ? parent : "-", mpi2dd_parent_rank(),
           mpi2dd_spawn_sequence());
    fflush(stdout);
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--spawn") == 0 && i + 1 < argc) {
            int n = atoi(argv[++i]);
            if (rank == 0 && !parent) {
                const char* args[] = {"--child", NULL};
                mpi2dd_spawn(argv[0], n, args);
            }
        } else if (strcmp(argv[i], "--abort") == 0) {
            if (rank == 1) {
                mpi2dd_abort("rank 1 found an inconsistent state");
            }
            wait_in_barrier();
        } else if (strcmp(argv[i], "--wait-for-debugger") == 0) {
            wait_for_debugger();
        } else if (strcmp(argv[i], "--forever") == 0) {
            run_forever(rank);
        } else if (strcmp(argv[i], "--crash") == 0) {
            crash_here(rank);
        } else if ((strcmp(argv[i], "--accept") == 0 || strcmp(argv[i], "--connect") == 0 ||
                    strcmp(argv[i], "--join") == 0) &&
                   i + 1 < argc) {
            const char* port = argv[++i];
            if (rank == 0) {
                if (argv[i - 1][2] == 'a') {
                    mpi2dd_accept(port);
                } else if (argv[i - 1][2] == 'c') {
                    mpi2dd_connect(port);
                } else {
                    mpi2dd_join(port);
                }
            }
        }
    }
    compute(rank);
    printf("MPI2DD-LOG rank=%d world=%s done result=%d\n", rank, mpi2dd_world(), g_result);
    return 0;
}
