/* Ground truth for the MPI examples: every operation a program posts is logged on stdout as
 * one line of key=value pairs, written with a single write() so that mpirun forwards it
 * whole, e.g.
 *   MPI-LOG rank=1 pid=4242 op=irecv peer=0 tag=21 count=4 type=MPI_INT bytes=16 buf=0x7ffc.. comm=MPI_COMM_WORLD
 * Tests parse these lines and compare them with what the debugger reports. When the
 * environment names a file in MPI_EXAMPLE_LOG, each line is also appended there (one
 * write() with O_APPEND, so lines of several ranks never mix): mpirun forwards stdout only
 * while it runs, and a debugger that stops or kills the job can keep the last lines from
 * arriving; the file has them as soon as the rank wrote them. */
#ifndef MPI_EXAMPLE_LOG_H
#define MPI_EXAMPLE_LOG_H

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_rank = -1;

static inline void mpi_log(const char* fmt, ...) {
    char line[1024];
    int n = snprintf(line, sizeof line, "MPI-LOG rank=%d pid=%d ", log_rank, (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 2, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    fflush(stdout);
    if (write(STDOUT_FILENO, line, (size_t)n) < 0) {
        /* nothing to do: the log is best effort */
    }
    const char* file = getenv("MPI_EXAMPLE_LOG");
    if (file != NULL && *file != '\0') {
        int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) < 0) {
                /* best effort, as above */
            }
            close(fd);
        }
    }
}

static inline const char* comm_name(MPI_Comm comm) {
    static char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Comm_get_name(comm, name, &len);
    return name;
}

/* Logs one point-to-point operation before it is posted. */
static inline void log_op(const char* op, int peer, int tag, int count, MPI_Datatype type,
                   const void* buf, MPI_Comm comm) {
    int size = 0;
    char tname[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Type_size(type, &size);
    MPI_Type_get_name(type, tname, &len);
    mpi_log("op=%s peer=%d tag=%d count=%d type=%s bytes=%d buf=%p comm=%s", op, peer, tag, count,
            tname, count * size, buf, comm_name(comm));
}

/* Holds the rank until SIGUSR1 (sent by the test to each rank's pid, or by hand), so that a
 * debugger can look at the queues while nothing changes; logs `state=holding` first. */
static inline void hold_until_sigusr1(void) {
    sigset_t set;
    int sig = 0;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    mpi_log("state=holding");
    sigwait(&set, &sig);
    mpi_log("state=released");
}

/* SIGUSR1 must be blocked in every thread (Open MPI starts some in MPI_Init) before
 * hold_until_sigusr1 can wait for it: call this first thing in main. */
static inline void block_sigusr1(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
}

#endif
