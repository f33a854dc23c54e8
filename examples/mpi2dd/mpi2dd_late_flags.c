/* mpi2dd-late: a second MPI2DD starter, written apart from mpi2dd-run, that fills its
 * whole MPI2DD_info at run time, in main(): in the file it is all zero (.bss), so nothing
 * but the symbols MPI2DD_info and MPI2DD_breakpoint says it is a starter.
 *
 *   mpi2dd-late -n N PROG [ARGS...]
 *
 * Starts N processes of PROG, rank programs that link mpi2dd_rank.c (their protocol: the
 * MPI2DD_* environment, a control pipe, READY at the gate, MPI2DD_FLAG_GATE to go), in the
 * comm world "late/w0", then raises START with its proctable, and exits with the largest
 * exit code of its ranks (128+N for a rank killed by signal N). Requests a rank sends
 * other than READY (spawn, abort, ...) are not implemented and are ignored.
 *
 * Its proctable is one block it builds once: N packed MPI2DD_PROCDESC entries followed by
 * a pool holding every string they point to. When a debugger set
 * MPI2DD_FLAG_BEING_DEBUGGED (before this program ran), the ranks wait at their gate and
 * START comes once all are there; otherwise they run freely and START comes at once. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ompdbg/tracer/mpi2dd.h"

static const char world[] = "late/w0";

static void fail(const char* what) {
    fprintf(stderr, "mpi2dd-late: %s\n", what);
    exit(2);
}

/* Everything but debugger_flags, which belongs to the debugger. */
static void fill_info(void) {
    static const MPI2DD_BYTE_T magic[5] = {MPI2DD_MAGIC_0, MPI2DD_MAGIC_1, MPI2DD_MAGIC_2, MPI2DD_MAGIC_3,
                                           MPI2DD_MAGIC_4};
    memcpy(MPI2DD_info.magic, magic, sizeof magic);
    MPI2DD_info.version = MPI2DD_VERSION;
    MPI2DD_info.variant = MPI2DD_VARIANT;
    MPI2DD_info.mpi_flags = MPI2DD_MPIFLAG_I_AM_STARTER | MPI2DD_MPIFLAG_I_AM_DIR | MPI2DD_MPIFLAG_IGNORE_QUEUE;
}

static int being_debugged(void) {
    return (*(volatile MPI2DD_UINT32_T*)&MPI2DD_info.debugger_flags & MPI2DD_FLAG_BEING_DEBUGGED) != 0;
}

/* One mapping: the table, then the strings (host, executable, world) shared by all entries. */
static void publish_table(const pid_t* pids, int n, const char* exe) {
    char host[HOST_NAME_MAX + 1] = "localhost";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    size_t table = (size_t)n * sizeof(struct MPI2DD_PROCDESC);
    size_t pool = strlen(host) + 1 + strlen(exe) + 1 + sizeof world;
    char* block = mmap(NULL, table + pool, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
        fail("out of memory");
    }
    char* s = block + table;
    char* host_s = strcpy(s, host);
    s += strlen(host) + 1;
    char* exe_s = strcpy(s, exe);
    s += strlen(exe) + 1;
    char* world_s = strcpy(s, world);
    struct MPI2DD_PROCDESC* t = (struct MPI2DD_PROCDESC*)block;
    for (int i = 0; i < n; ++i) {
        struct MPI2DD_PROCDESC d = {MPI2DD_ADDR(host_s), MPI2DD_ADDR(exe_s), 0, MPI2DD_ADDR(world_s), pids[i], i};
        memcpy(&t[i], &d, sizeof d);
    }
    MPI2DD_info.proctable = MPI2DD_ADDR(block);
    MPI2DD_info.proctable_size = n;
}

static void raise_start(void) {
    MPI2DD_info.debug_state = MPI2DD_DEBUG_START;
    MPI2DD_breakpoint();
}

/* Reads the ranks' control pipe until `n` READY lines came (a rank that dies first closes
 * its end: the read then fails once every writer is gone). */
static void wait_ready(int fd, int n) {
    char buf[256];
    size_t have = 0;
    int ready = 0;
    while (ready < n) {
        ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
        if (got <= 0) {
            fail("a rank ended before reaching its gate");
        }
        have += (size_t)got;
        buf[have] = '\0';
        char* nl;
        while ((nl = strchr(buf, '\n')) != NULL) {
            if (strncmp(buf, "READY ", 6) == 0) {
                ++ready;
            }
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have - used + 1);
            have -= used;
        }
        if (have == sizeof buf - 1) {
            have = 0;   /* a line too long for any request: drop it */
        }
    }
}

int main(int argc, char** argv) {
    fill_info();
    if (argc < 4 || strcmp(argv[1], "-n") != 0 || atoi(argv[2]) <= 0) {
        fprintf(stderr, "usage: mpi2dd-late -n N PROG [ARGS...]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    char exe[PATH_MAX];
    if (!realpath(argv[3], exe)) {
        perror(argv[3]);
        return 2;
    }
    int ctl[2];
    if (pipe(ctl) != 0) {
        fail("pipe");
    }
    int debugged = being_debugged();
    pid_t* pids = calloc((size_t)n, sizeof *pids);
    if (!pids) {
        fail("out of memory");
    }
    for (int i = 0; i < n; ++i) {
        pids[i] = fork();
        if (pids[i] < 0) {
            fail("fork");
        }
        if (pids[i] == 0) {
            char num[32];
            close(ctl[0]);
            snprintf(num, sizeof num, "%d", i);
            setenv("MPI2DD_RANK", num, 1);
            snprintf(num, sizeof num, "%d", n);
            setenv("MPI2DD_SIZE", num, 1);
            setenv("MPI2DD_WORLD", world, 1);
            snprintf(num, sizeof num, "%d", ctl[1]);
            setenv("MPI2DD_CTL_FD", num, 1);
            setenv("MPI2DD_DEBUGGED", debugged ? "1" : "0", 1);
            execv(exe, argv + 3);
            perror(exe);
            _exit(127);
        }
    }
    close(ctl[1]);
    if (debugged) {
        wait_ready(ctl[0], n);
    }
    publish_table(pids, n, exe);
    raise_start();
    int worst = 0;
    for (int left = n; left > 0; --left) {
        int status = 0;
        if (wait(&status) < 0) {
            break;
        }
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        worst = code > worst ? code : worst;
    }
    return worst;
}
