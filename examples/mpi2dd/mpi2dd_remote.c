/* Ranks of mpi2dd-run on other hosts (mpi2dd_remote.h). The remote shell runs
 *   echo $$; exec 3>&1 1>&2 setsid env MPI2DD_...=... PROG ARGS
 * on the host (setsid, as mpirun's daemons do: the rank leads its process group, which is
 * what gdbserver interrupts). The first line of its stdout is the rank's pid there (the
 * shell's, which the exec keeps; setsid does not fork a process that leads no group), the
 * rest of that stdout is the rank's request stream (MPI2DD_CTL_FD=3), and what the rank
 * prints goes to the remote shell's stderr, which is this starter's stdout.
 * A small relay process copies the request stream into the starter's control pipe, so the
 * starter reads every rank, here or there, from one pipe. */
#define _GNU_SOURCE
#include "mpi2dd_remote.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi2dd_starter_util.h"

struct remote_host {
    char* name;
    int ranks;
};
static struct remote_host* g_hosts = NULL;
static int g_host_count = 0;
static const char* g_rsh = NULL;

int mpi2dd_remote_option(int argc, char** argv, int* i) {
    if (strcmp(argv[*i], "--rsh") == 0 && *i + 1 < argc) {
        g_rsh = argv[++*i];
        return 1;
    }
    if (strcmp(argv[*i], "--host") != 0 || *i + 1 >= argc) {
        return 0;
    }
    const char* spec = argv[++*i];
    const char* colon = strrchr(spec, ':');
    int n = colon ? atoi(colon + 1) : 0;
    if (!colon || colon == spec || n <= 0) {
        die("--host wants HOST:N (N ranks on HOST), not \"%s\"", spec);
    }
    g_hosts = xrealloc(g_hosts, sizeof *g_hosts * (size_t)(g_host_count + 1));
    g_hosts[g_host_count].name = strndup(spec, (size_t)(colon - spec));
    g_hosts[g_host_count].ranks = n;
    ++g_host_count;
    return 1;
}

int mpi2dd_remote_count(void) {
    int n = 0;
    for (int h = 0; h < g_host_count; ++h) {
        n += g_hosts[h].ranks;
    }
    return n;
}

const char* mpi2dd_remote_host(int rank, int size) {
    int first = size - mpi2dd_remote_count();
    for (int h = 0; h < g_host_count; ++h) {
        if (rank >= first && rank < first + g_hosts[h].ranks) {
            return g_hosts[h].name;
        }
        first += g_hosts[h].ranks;
    }
    return NULL;
}

/* Appends `word` to `line` quoted for the host's shell ('...', a quote as '\''). */
static void append_quoted(char** line, size_t* len, const char* word) {
    size_t need = *len + strlen(word) * 4 + 4;
    *line = xrealloc(*line, need);
    char* o = *line + *len;
    *o++ = ' ';
    *o++ = '\'';
    for (const char* c = word; *c; ++c) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = 0;
    *len = (size_t)(o - *line);
}

/* The command line the remote shell runs on the host. */
static char* remote_command(const char* exe, char* const* args, int rank, int size, const char* world, int debugged) {
    char head[256];
    snprintf(head, sizeof head, "echo $$; exec 3>&1 1>&2 setsid env MPI2DD_RANK=%d MPI2DD_SIZE=%d MPI2DD_CTL_FD=3 "
             "MPI2DD_DEBUGGED=%d", rank, size, debugged ? 1 : 0);
    char* line = xstrdup(head);
    size_t len = strlen(line);
    char var[256];
    snprintf(var, sizeof var, "MPI2DD_WORLD=%s", world);
    append_quoted(&line, &len, var);
    append_quoted(&line, &len, exe);
    for (int a = 1; args[a]; ++a) {
        append_quoted(&line, &len, args[a]);
    }
    return line;
}

/* The first line of `fd`, read a byte at a time (what follows is the relay's), waiting at
 * most 30 s: the host's pid of the rank, or 0. */
static pid_t read_pid_line(int fd) {
    char buf[32];
    size_t n = 0;
    while (n + 1 < sizeof buf) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 30000) <= 0 || read(fd, buf + n, 1) != 1) {
            return 0;
        }
        if (buf[n] == '\n') {
            break;
        }
        ++n;
    }
    buf[n] = 0;
    return (pid_t)atoi(buf);
}

/* Copies the rank's request stream into the control pipe until the remote shell ends. */
static void relay(int from, int to) {
    char buf[4096];
    ssize_t got;
    while ((got = read(from, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
        if (got > 0 && write(to, buf, (size_t)got) != got) {
            break;
        }
    }
    _exit(0);
}

pid_t mpi2dd_remote_start(const char* host, const char* exe, char* const* args, int rank, int size,
                          const char* world, int debugged, int ctl_fd, pid_t* host_pid) {
    const char* rsh = g_rsh ? g_rsh : getenv("MPI2DD_RSH");
    char* shell = NULL;
    if (asprintf(&shell, "%s \"$@\"", rsh && *rsh ? rsh : "ssh -T") < 0) {
        die("out of memory");
    }
    char* command = remote_command(exe, args, rank, size, world, debugged);
    int out[2];
    if (pipe(out) != 0) {
        die("pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        die("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(STDOUT_FILENO, STDERR_FILENO);
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execl("/bin/sh", "sh", "-c", shell, "sh", host, command, (char*)NULL);
        fprintf(stderr, "mpi2dd-run: /bin/sh: %s\n", strerror(errno));
        _exit(127);
    }
    close(out[1]);
    free(shell);
    free(command);
    *host_pid = read_pid_line(out[0]);
    if (*host_pid <= 0) {
        fprintf(stderr, "mpi2dd-run: rank %d did not start on host %s\n", rank, host);
    }
    pid_t relay_pid = fork();
    if (relay_pid < 0) {
        die("fork: %s", strerror(errno));
    }
    if (relay_pid == 0) {
        relay(out[0], ctl_fd);
    }
    close(out[0]);
    return pid;
}
