/* The rank library of the reference MPI2DD implementation (see mpi2dd_rank.h). */
#define _GNU_SOURCE
#include "mpi2dd_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ompdbg/tracer/mpi2dd.h"

/* The rank's own interface: no tables (a rank is not a directory), the gate in
 * debugger_flags. */
struct MPI2DD_INFO MPI2DD_info = {
    {MPI2DD_MAGIC_0, MPI2DD_MAGIC_1, MPI2DD_MAGIC_2, MPI2DD_MAGIC_3, MPI2DD_MAGIC_4},
    MPI2DD_VERSION,
    MPI2DD_VARIANT,
    0,
    0,
    MPI2DD_MPIFLAG_IGNORE_QUEUE,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0}};

__attribute__((noinline)) void MPI2DD_breakpoint(void) {
    __asm__ volatile("" ::: "memory");
}

static int g_rank = -1, g_size = 0, g_ctl = -1, g_parent_rank = -1, g_seq = -1;
static const char* g_world = "";
static const char* g_parent_world = NULL;

static int env_int(const char* name, int dflt) {
    const char* v = getenv(name);
    return v ? atoi(v) : dflt;
}

/* One request line to the starter; a write of less than PIPE_BUF bytes is atomic. */
static void send_line(const char* line) {
    if (g_ctl < 0) {
        fprintf(stderr, "mpi2dd: not started by mpi2dd-run\n");
        exit(2);
    }
    size_t n = strlen(line);
    if (write(g_ctl, line, n) != (ssize_t)n) {
        perror("mpi2dd: control pipe");
        exit(2);
    }
}

int mpi2dd_init(void) {
    const char* world = getenv("MPI2DD_WORLD");
    if (!world) {
        return -1;
    }
    g_world = world;
    g_rank = env_int("MPI2DD_RANK", -1);
    g_size = env_int("MPI2DD_SIZE", 0);
    g_ctl = env_int("MPI2DD_CTL_FD", -1);
    g_parent_world = getenv("MPI2DD_PARENT_WORLD");
    g_parent_rank = env_int("MPI2DD_PARENT_RANK", -1);
    g_seq = env_int("MPI2DD_SPAWN_SEQUENCE", -1);
    if (env_int("MPI2DD_DEBUGGED", 0)) {
        /* Tell the starter we are at the gate, then wait for the debugger to open it. */
        char line[64];
        snprintf(line, sizeof line, "READY %d\n", (int)getpid());
        send_line(line);
        volatile MPI2DD_UINT32_T* flags = &MPI2DD_info.debugger_flags;
        while (!(*flags & MPI2DD_FLAG_GATE)) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

int mpi2dd_rank(void) { return g_rank; }
int mpi2dd_size(void) { return g_size; }
const char* mpi2dd_world(void) { return g_world; }
const char* mpi2dd_parent_world(void) { return g_parent_world; }
int mpi2dd_parent_rank(void) { return g_parent_rank; }
int mpi2dd_spawn_sequence(void) { return g_seq; }

void mpi2dd_spawn(const char* prog, int n, const char* const* args) {
    char line[1024];
    int len = snprintf(line, sizeof line, "SPAWN %s %d %d %s", g_world, g_rank, n, prog);
    for (int i = 0; args && args[i] && len < (int)sizeof line; ++i) {
        len += snprintf(line + len, sizeof line - (size_t)len, " %s", args[i]);
    }
    if (len + 2 > (int)sizeof line) {
        fprintf(stderr, "mpi2dd_spawn: command line too long\n");
        exit(2);
    }
    strcat(line, "\n");
    send_line(line);
}

void mpi2dd_abort(const char* message) {
    char line[1024];
    snprintf(line, sizeof line, "ABORT %s %d %s\n", g_world, g_rank, message);
    send_line(line);
    for (;;) {
        pause();   /* the starter ends the job */
    }
}

static void port_request(const char* verb, const char* port) {
    char line[1024];
    snprintf(line, sizeof line, "%s %s\n", verb, port);
    send_line(line);
}

void mpi2dd_accept(const char* port) { port_request("ACCEPT", port); }
void mpi2dd_connect(const char* port) { port_request("CONNECT", port); }
void mpi2dd_join(const char* port) { port_request("JOIN", port); }
