/* mpi2dd-run: the reference starter of the MPI-2 debugger interface (MPI2DD).
 *
 *   mpi2dd-run [--job NAME] [--dirs K | [--rsh CMD] --host HOST:N...] -np N PROG [ARGS...]
 *
 * Starts N rank processes of PROG (they link mpi2dd_rank.c) in the comm world
 * "NAME/world0", fills its MPI2DD_info and proctable and calls MPI2DD_breakpoint with
 * debug_state set for every event: START once the ranks are at their gate, SPAWN when a
 * rank spawns a new comm world, CONNECT/ACCEPT/JOIN when a rank connects this job to
 * another one (the two starters exchange their process tables over a Unix socket), ABORT
 * with abort_string when a rank calls mpi2dd_abort(). With --dirs K the job is
 * hierarchical: this starter is the metadirectory and K forked directory processes each
 * start and hold part of the ranks (their own proctable); a directory whose table changes
 * raises DIRECTORY_CHANGED, the metadirectory raises METADIRECTORY_CHANGED when a
 * directory is added (a spawn makes one), both only when the debugger asked for them.
 * With --host HOST:N the last N ranks run on HOST, through a remote shell (mpi2dd_remote.h).
 *
 * When a debugger has set MPI2DD_FLAG_BEING_DEBUGGED, the ranks wait in mpi2dd_init()
 * until it sets their gate; otherwise they run freely.
 *
 * MPI2DD_RUN_CORRUPT=KIND makes this starter publish a malformed interface at START, for
 * the debugger's bad-input tests: magic, version, variant, size-negative, size-huge,
 * table-unmapped, string-unmapped, string-unterminated, dir-self, dir-cycle, pid-missing
 * (the first entry's pid; pid-missing-last: the last one's), pid=N (an unrelated process). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpi2dd_remote.h"
#include "mpi2dd_starter_util.h"
#include "ompdbg/tracer/mpi2dd.h"

struct MPI2DD_INFO MPI2DD_info = {
    {MPI2DD_MAGIC_0, MPI2DD_MAGIC_1, MPI2DD_MAGIC_2, MPI2DD_MAGIC_3, MPI2DD_MAGIC_4},
    MPI2DD_VERSION,
    MPI2DD_VARIANT,
    0,
    0,
    MPI2DD_MPIFLAG_I_AM_STARTER | MPI2DD_MPIFLAG_I_AM_DIR | MPI2DD_MPIFLAG_IGNORE_QUEUE,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {0}};

#ifdef MPI2DD_ALSO_MPIR
/* mpi2dd-run-mpir also offers the MPIR interface (the debugger must prefer MPI2DD). */
struct MPIR_PROCDESC {
    char* host_name;
    char* executable_name;
    int pid;
};
struct MPIR_PROCDESC* MPIR_proctable = NULL;
int MPIR_proctable_size = 0;
volatile int MPIR_debug_state = 0;
volatile int MPIR_being_debugged = 0;
__attribute__((noinline)) void MPIR_Breakpoint(void) {
    __asm__ volatile("" ::: "memory");
}
#endif

/* Where a debugger plants its breakpoint; must not be inlined or merged away. */
__attribute__((noinline)) void MPI2DD_breakpoint(void) {
    __asm__ volatile("" ::: "memory");
}

static char g_host[256] = "localhost";
static const char* g_job = NULL;
static int g_ctl[2] = {-1, -1};   /* ranks (and directories) -> this process */
static int g_up = -1;             /* a directory's line to its metadirectory */
static int g_failed = 0;
static int g_world_count = 0;
static volatile sig_atomic_t g_terminate = 0;

static int debugged(void) {
    return (*(volatile MPI2DD_UINT32_T*)&MPI2DD_info.debugger_flags & MPI2DD_FLAG_BEING_DEBUGGED) != 0;
}

static int directory_events(void) {
    return (*(volatile MPI2DD_UINT32_T*)&MPI2DD_info.debugger_flags & MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS) != 0;
}

static void raise_event(int state) {
    MPI2DD_info.debug_state = (MPI2DD_BYTE_T)state;
    MPI2DD_breakpoint();
}

/* ---- this process's tables ------------------------------------------------------- */

static struct MPI2DD_PROCDESC* g_table = NULL;
static int g_table_size = 0;
static struct MPI2DD_DIRECTORYENTRY* g_dirs = NULL;
static int g_dir_count = 0;

static void publish(void) {
    MPI2DD_info.proctable = MPI2DD_ADDR(g_table);
    MPI2DD_info.proctable_size = g_table_size;
    MPI2DD_info.directory_table = MPI2DD_ADDR(g_dirs);
    MPI2DD_info.directory_size = g_dir_count;
}

static void add_proc(pid_t pid, int rank, const char* world, const char* exe, const char* host,
                     struct MPI2DD_SPAWNDESC* spawn) {
    g_table = xrealloc(g_table, sizeof *g_table * (size_t)(g_table_size + 1));
    struct MPI2DD_PROCDESC* d = &g_table[g_table_size++];
    d->host_name = MPI2DD_ADDR(xstrdup(host));
    d->executable_name = MPI2DD_ADDR(xstrdup(exe));
    d->spawn_desc = MPI2DD_ADDR(spawn);
    d->comm_world_id = MPI2DD_ADDR(xstrdup(world));
    d->pid = pid;
    d->rank = rank;
    publish();
}

static void remove_proc(pid_t pid) {
    for (int i = 0; i < g_table_size; ++i) {
        if (g_table[i].pid == pid) {
            memmove(&g_table[i], &g_table[i + 1], sizeof *g_table * (size_t)(g_table_size - i - 1));
            --g_table_size;
            publish();
            return;
        }
    }
}

static void add_dir(pid_t pid, const char* exe) {
    g_dirs = xrealloc(g_dirs, sizeof *g_dirs * (size_t)(g_dir_count + 1));
    struct MPI2DD_DIRECTORYENTRY* e = &g_dirs[g_dir_count++];
    e->host_name = MPI2DD_ADDR(xstrdup(g_host));
    e->executable_name = MPI2DD_ADDR(xstrdup(exe));
    e->pid = pid;
    publish();
}

static int remove_dir(pid_t pid) {
    for (int i = 0; i < g_dir_count; ++i) {
        if (g_dirs[i].pid == pid) {
            memmove(&g_dirs[i], &g_dirs[i + 1], sizeof *g_dirs * (size_t)(g_dir_count - i - 1));
            --g_dir_count;
            publish();
            return 1;
        }
    }
    return 0;
}

/* ---- children -------------------------------------------------------------------- */

struct child {
    pid_t pid;
    pid_t host_pid;   /* a rank on another host: its pid there (pid: its remote shell) */
    int rank;
    char world[128];
};
static struct child* g_children = NULL;
static int g_child_count = 0;

static void add_child(pid_t pid, int rank, const char* world) {
    g_children = xrealloc(g_children, sizeof *g_children * (size_t)(g_child_count + 1));
    g_children[g_child_count].pid = pid;
    g_children[g_child_count].host_pid = pid;
    g_children[g_child_count].rank = rank;
    snprintf(g_children[g_child_count].world, sizeof g_children[0].world, "%s", world);
    ++g_child_count;
}

/* Reaps ended children; returns how many are left. A rank that failed is reported and
 * makes the job fail; a directory changes its table (DIRECTORY_CHANGED). */
static int reap(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < g_child_count; ++i) {
            if (g_children[i].pid != pid) {
                continue;
            }
            if (WIFSIGNALED(status)) {
                fprintf(stderr, "mpi2dd-run: rank %d of %s (pid %d) was killed by signal %d\n", g_children[i].rank,
                        g_children[i].world, (int)pid, WTERMSIG(status));
                g_failed = 1;
            } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
                fprintf(stderr, "mpi2dd-run: rank %d of %s (pid %d) exited with code %d\n", g_children[i].rank,
                        g_children[i].world, (int)pid, WEXITSTATUS(status));
                g_failed = 1;
            }
            g_children[i] = g_children[--g_child_count];
            break;
        }
        if (remove_dir(pid) && directory_events()) {
            raise_event(MPI2DD_DEBUG_METADIRECTORY_CHANGED);
        }
        if (MPI2DD_info.mpi_flags & MPI2DD_MPIFLAG_I_AM_DIR) {
            int before = g_table_size;
            remove_proc(pid);
            if (g_table_size != before && (MPI2DD_info.mpi_flags & MPI2DD_MPIFLAG_I_AM_METADIR) == 0 &&
                directory_events()) {
                raise_event(MPI2DD_DEBUG_DIRECTORY_CHANGED);
            }
        }
    }
    return g_child_count;
}

static char* g_self_exe = NULL;

/* Forks and execs one rank; the environment tells mpi2dd_init() who it is. */
static pid_t start_rank(const char* exe, char* const* args, int rank, int size, const char* world,
                        const char* parent_world, int parent_rank, int seq, int ctl_fd) {
    pid_t pid = fork();
    if (pid < 0) {
        die("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        char num[32];
        snprintf(num, sizeof num, "%d", rank);
        setenv("MPI2DD_RANK", num, 1);
        snprintf(num, sizeof num, "%d", size);
        setenv("MPI2DD_SIZE", num, 1);
        setenv("MPI2DD_WORLD", world, 1);
        snprintf(num, sizeof num, "%d", ctl_fd);
        setenv("MPI2DD_CTL_FD", num, 1);
        setenv("MPI2DD_DEBUGGED", debugged() ? "1" : "0", 1);
        if (parent_world) {
            setenv("MPI2DD_PARENT_WORLD", parent_world, 1);
            snprintf(num, sizeof num, "%d", parent_rank);
            setenv("MPI2DD_PARENT_RANK", num, 1);
            snprintf(num, sizeof num, "%d", seq);
            setenv("MPI2DD_SPAWN_SEQUENCE", num, 1);
        }
        signal(SIGTERM, SIG_DFL);
        execv(exe, args);
        fprintf(stderr, "mpi2dd-run: %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    return pid;
}

/* ---- the control pipe -------------------------------------------------------------- */

static char g_buf[8192];
static size_t g_buf_len = 0;

/* The next request line of a rank, waiting up to `timeout_ms`; NULL on timeout. */
static char* next_line(int timeout_ms) {
    static char line[4096];
    for (;;) {
        char* nl = memchr(g_buf, '\n', g_buf_len);
        if (nl) {
            size_t n = (size_t)(nl - g_buf);
            if (n >= sizeof line) {
                n = sizeof line - 1;
            }
            memcpy(line, g_buf, n);
            line[n] = 0;
            g_buf_len -= (size_t)(nl - g_buf) + 1;
            memmove(g_buf, nl + 1, g_buf_len);
            return line;
        }
        struct pollfd p = {g_ctl[0], POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR) {
            return NULL;
        }
        if (r <= 0) {
            return NULL;
        }
        ssize_t got = read(g_ctl[0], g_buf + g_buf_len, sizeof g_buf - g_buf_len);
        if (got <= 0) {
            return NULL;
        }
        g_buf_len += (size_t)got;
    }
}

/* Requests that arrived while we waited for something else, handled later. */
static char** g_deferred = NULL;
static int g_deferred_count = 0;

static void defer(const char* line) {
    g_deferred = xrealloc(g_deferred, sizeof *g_deferred * (size_t)(g_deferred_count + 1));
    g_deferred[g_deferred_count++] = xstrdup(line);
}

static int is_child(pid_t pid) {
    for (int i = 0; i < g_child_count; ++i) {
        if (g_children[i].pid == pid || g_children[i].host_pid == pid) {
            return 1;
        }
    }
    return 0;
}

/* Waits until each of `pids` sent its `what` line (READY: a rank at its gate; DIRREADY: a
 * directory whose ranks are) or ended; gives up after a minute (the job then starts
 * without it). Other requests are deferred. */
static void wait_ready(const char* what, pid_t* pids, int count) {
    time_t deadline = time(NULL) + 60;
    size_t len = strlen(what);
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < count; ++i) {
            if (pids[i] > 0 && !is_child(pids[i])) {
                fprintf(stderr, "mpi2dd-run: process %d ended before it reached MPI2DD start-up\n", (int)pids[i]);
                pids[i] = 0;
            }
            waiting += pids[i] > 0;
        }
        if (waiting == 0) {
            return;
        }
        if (time(NULL) >= deadline) {
            fprintf(stderr, "mpi2dd-run: %d processes did not reach MPI2DD start-up\n", waiting);
            return;
        }
        char* line = next_line(100);
        if (!line) {
            reap();
            continue;
        }
        if (strncmp(line, what, len) == 0 && line[len] == ' ') {
            pid_t pid = atoi(line + len + 1);
            for (int i = 0; i < count; ++i) {
                if (pids[i] == pid) {
                    pids[i] = 0;
                }
            }
        } else {
            defer(line);
        }
    }
}

/* ---- directories (hierarchical mode) ----------------------------------------------- */

static void on_sigterm(int sig) {
    (void)sig;
    g_terminate = 1;
}

/* A directory process: starts ranks [first, first+count) of `world` (size `size`), holds
 * their part of the proctable, forwards their requests to the metadirectory. */
static pid_t g_list_back = 0;   /* dir-cycle: the directory lists its metadirectory */

static void run_directory(const char* exe, char* const* args, int first, int count, int size, const char* world,
                          struct MPI2DD_SPAWNDESC* spawn, const char* parent_world, int parent_rank, int seq) {
    int up = g_ctl[1];
    close(g_ctl[0]);
    if (pipe(g_ctl) != 0) {
        die("pipe: %s", strerror(errno));
    }
    g_up = up;
    g_buf_len = 0;
    g_deferred_count = 0;
    g_child_count = 0;
    g_table_size = 0;
    g_table = NULL;
    g_dir_count = 0;
    g_dirs = NULL;
    MPI2DD_info.mpi_flags = MPI2DD_MPIFLAG_I_AM_DIR | MPI2DD_MPIFLAG_IGNORE_QUEUE;
    publish();
    if (g_list_back) {
        MPI2DD_info.mpi_flags |= MPI2DD_MPIFLAG_I_AM_METADIR;
        add_dir(g_list_back, g_self_exe);
    }
    signal(SIGTERM, on_sigterm);
    pid_t meta = getppid();
    pid_t* pids = xrealloc(NULL, sizeof *pids * (size_t)(count + 1));
    for (int r = first; r < first + count; ++r) {
        pid_t pid = start_rank(exe, args, r, size, world, parent_world, parent_rank, seq, g_ctl[1]);
        add_child(pid, r, world);
        add_proc(pid, r, world, exe, g_host, spawn);
        pids[r - first] = pid;
    }
    if (debugged()) {
        wait_ready("READY", pids, count);
    }
    free(pids);
    char line[64];
    snprintf(line, sizeof line, "DIRREADY %d\n", (int)getpid());
    if (write(up, line, strlen(line)) < 0) {
        _exit(2);
    }
    for (int d = 0; d < g_deferred_count; ++d) {
        size_t n = strlen(g_deferred[d]);
        g_deferred[d][n] = 0;
        if (write(up, g_deferred[d], n) < 0 || write(up, "\n", 1) < 0) {
            _exit(2);
        }
    }
    g_deferred_count = 0;
    for (;;) {
        if (g_terminate) {
            for (int i = 0; i < g_child_count; ++i) {
                kill(g_children[i].pid, SIGTERM);
            }
            g_terminate = 0;
        }
        int live = reap();
        if (getppid() != meta) {
            for (int i = 0; i < g_child_count; ++i) {
                kill(g_children[i].pid, SIGKILL);
            }
            _exit(3);
        }
        char* l = next_line(live > 0 ? 100 : 0);
        if (l) {
            size_t n = strlen(l);
            l[n] = '\n';
            if (write(up, l, n + 1) < 0) {
                _exit(2);
            }
        } else if (live == 0) {
            break;
        }
    }
    _exit(g_failed ? 1 : 0);
}

static pid_t start_directory(const char* exe, char* const* args, int first, int count, int size, const char* world,
                             struct MPI2DD_SPAWNDESC* spawn, const char* parent_world, int parent_rank, int seq) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        die("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        run_directory(exe, args, first, count, size, world, spawn, parent_world, parent_rank, seq);
    }
    add_child(pid, -1, "directory");
    add_dir(pid, g_self_exe);
    return pid;
}

/* ---- events --------------------------------------------------------------------------- */

static int g_hier_dirs = 0;

/* Spawn sequences per parent (world, rank). */
struct seq_entry {
    char world[128];
    int rank;
    int next;
};
static struct seq_entry g_seqs[64];
static int g_seq_count = 0;

static int next_sequence(const char* world, int rank) {
    for (int i = 0; i < g_seq_count; ++i) {
        if (g_seqs[i].rank == rank && strcmp(g_seqs[i].world, world) == 0) {
            return g_seqs[i].next++;
        }
    }
    if (g_seq_count == 64) {
        die("too many spawning ranks");
    }
    snprintf(g_seqs[g_seq_count].world, sizeof g_seqs[0].world, "%s", world);
    g_seqs[g_seq_count].rank = rank;
    g_seqs[g_seq_count].next = 1;
    ++g_seq_count;
    return 0;
}

static char** split_words(char* text, int* count) {
    char** words = NULL;
    int n = 0;
    for (char* w = strtok(text, " "); w; w = strtok(NULL, " ")) {
        words = xrealloc(words, sizeof *words * (size_t)(n + 2));
        words[n++] = w;
    }
    if (words) {
        words[n] = NULL;
    }
    *count = n;
    return words;
}

/* "SPAWN PARENT_WORLD PARENT_RANK N PROG ARGS..." */
static void do_spawn(char* request) {
    int n = 0;
    char** w = split_words(request, &n);
    if (n < 5) {
        fprintf(stderr, "mpi2dd-run: malformed spawn request\n");
        free(w);
        return;
    }
    const char* parent_world = xstrdup(w[1]);
    int parent_rank = atoi(w[2]);
    int count = atoi(w[3]);
    char* exe = absolute_program(w[4]);
    char** args = xrealloc(NULL, sizeof *args * (size_t)(n - 3));
    args[0] = exe;
    for (int i = 5; i < n; ++i) {
        args[i - 4] = xstrdup(w[i]);
    }
    args[n - 4] = NULL;
    free(w);
    char world[128];
    snprintf(world, sizeof world, "%s/world%d", g_job, ++g_world_count);
    int seq = next_sequence(parent_world, parent_rank);
    struct MPI2DD_SPAWNDESC* spawn = xrealloc(NULL, sizeof *spawn);
    spawn->parent_comm_world_id = MPI2DD_ADDR(parent_world);
    spawn->parent_rank = parent_rank;
    spawn->sequence = seq;
    if (g_hier_dirs > 0) {
        /* A new directory holds the new comm world. */
        pid_t dir = start_directory(exe, args, 0, count, count, world, spawn, parent_world, parent_rank, seq);
        wait_ready("DIRREADY", &dir, 1);
        if (directory_events()) {
            raise_event(MPI2DD_DEBUG_METADIRECTORY_CHANGED);
        }
    } else {
        pid_t* pids = xrealloc(NULL, sizeof *pids * (size_t)count);
        for (int r = 0; r < count; ++r) {
            pids[r] = start_rank(exe, args, r, count, world, parent_world, parent_rank, seq, g_ctl[1]);
            add_child(pids[r], r, world);
            add_proc(pids[r], r, world, exe, g_host, spawn);
        }
        if (debugged()) {
            wait_ready("READY", pids, count);
        }
        free(pids);
    }
    raise_event(MPI2DD_DEBUG_SPAWN);
}

static void do_abort(char* request) {
    /* "ABORT WORLD RANK MESSAGE..." */
    char* world = strtok(request + 6, " ");
    char* rank = strtok(NULL, " ");
    char* message = strtok(NULL, "");
    static char text[1200];
    snprintf(text, sizeof text, "MPI_Abort by rank %s of %s: %s", rank ? rank : "?", world ? world : "?",
             message ? message : "");
    MPI2DD_info.abort_string = MPI2DD_ADDR(text);
    raise_event(MPI2DD_DEBUG_ABORT);
    fprintf(stderr, "mpi2dd-run: %s\n", text);
    for (int i = 0; i < g_child_count; ++i) {
        kill(g_children[i].pid, SIGTERM);
    }
    g_failed = 1;
}

/* Sends our table to the peer starter and reads its table into ours. */
static int exchange_tables(int fd) {
    FILE* out = fdopen(dup(fd), "w");
    FILE* in = fdopen(dup(fd), "r");
    if (!out || !in) {
        return -1;
    }
    int base = g_table_size;
    for (int i = 0; i < base; ++i) {
        fprintf(out, "P %d %d %s %s %s\n", g_table[i].pid, g_table[i].rank,
                (const char*)(uintptr_t)g_table[i].comm_world_id, (const char*)(uintptr_t)g_table[i].executable_name,
                (const char*)(uintptr_t)g_table[i].host_name);
    }
    fprintf(out, "END\n");
    fclose(out);
    char line[2048];
    int added = 0;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "END", 3) == 0) {
            break;
        }
        int pid = 0, rank = 0;
        char world[512], exe[PATH_MAX], host[256];
        if (sscanf(line, "P %d %d %511s %4095s %255s", &pid, &rank, world, exe, host) == 5) {
            add_proc(pid, rank, world, exe, host, NULL);
            ++added;
        }
    }
    fclose(in);
    return added;
}

static int port_socket(const char* port, struct sockaddr_un* addr) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (strlen(port) >= sizeof addr->sun_path) {
        fprintf(stderr, "mpi2dd-run: port name too long: %s\n", port);
        return -1;
    }
    strcpy(addr->sun_path, port);
    return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static int listen_and_accept(const char* port) {
    struct sockaddr_un addr;
    int s = port_socket(port, &addr);
    if (s < 0) {
        return -1;
    }
    unlink(port);
    if (bind(s, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(s, 1) != 0) {
        fprintf(stderr, "mpi2dd-run: %s: %s\n", port, strerror(errno));
        close(s);
        return -1;
    }
    printf("mpi2dd-run: listening on %s\n", port);   /* for whoever connects */
    fflush(stdout);
    struct pollfd p = {s, POLLIN, 0};
    int fd = -1;
    if (poll(&p, 1, 120000) == 1) {
        fd = accept4(s, NULL, NULL, SOCK_CLOEXEC);
    }
    close(s);
    unlink(port);
    return fd;
}

static int try_connect(const char* port, int patience_ms) {
    struct sockaddr_un addr;
    for (int waited = 0;; waited += 10) {
        int s = port_socket(port, &addr);
        if (s < 0) {
            return -1;
        }
        if (connect(s, (struct sockaddr*)&addr, sizeof addr) == 0) {
            return s;
        }
        close(s);
        if (waited >= patience_ms) {
            return -1;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

/* "ACCEPT PORT", "CONNECT PORT", "JOIN PORT" */
static void do_port(const char* verb, const char* port) {
    int fd = -1;
    int state = 0;
    if (strcmp(verb, "ACCEPT") == 0) {
        fd = listen_and_accept(port);
        state = MPI2DD_DEBUG_ACCEPT;
    } else if (strcmp(verb, "CONNECT") == 0) {
        fd = try_connect(port, 120000);
        state = MPI2DD_DEBUG_CONNECT;
    } else {
        /* MPI_Comm_join: symmetric; whoever comes first listens. */
        fd = try_connect(port, 0);
        if (fd < 0) {
            fd = listen_and_accept(port);
        }
        state = MPI2DD_DEBUG_JOIN;
    }
    if (fd < 0) {
        fprintf(stderr, "mpi2dd-run: %s %s failed\n", verb, port);
        g_failed = 1;
        return;
    }
    int added = exchange_tables(fd);
    close(fd);
    if (added > 0) {
        raise_event(state);
    }
}

static void handle_request(char* line) {
    if (strncmp(line, "SPAWN ", 6) == 0) {
        do_spawn(line);
    } else if (strncmp(line, "ABORT ", 6) == 0) {
        do_abort(line);
    } else if (strncmp(line, "ACCEPT ", 7) == 0 || strncmp(line, "CONNECT ", 8) == 0 ||
               strncmp(line, "JOIN ", 5) == 0) {
        char* verb = strtok(line, " ");
        char* port = strtok(NULL, " ");
        if (port) {
            do_port(verb, port);
        }
    } else if (strncmp(line, "READY ", 6) == 0 || strncmp(line, "DIRREADY ", 9) == 0) {
        /* late: the process was started while nobody waited */
    } else {
        fprintf(stderr, "mpi2dd-run: unknown request \"%s\"\n", line);
    }
}

/* Handles the requests deferred while waiting; handling one may defer more. */
static void handle_deferred(void) {
    while (g_deferred_count > 0) {
        char* line = g_deferred[0];
        memmove(g_deferred, g_deferred + 1, sizeof *g_deferred * (size_t)(g_deferred_count - 1));
        --g_deferred_count;
        handle_request(line);
        free(line);
    }
}

/* ---- bad input for the debugger's tests -------------------------------------------- */

static void corrupt(const char* kind) {
    long page = sysconf(_SC_PAGESIZE);
    if (strcmp(kind, "magic") == 0) {
        MPI2DD_info.magic[3] = '3';
    } else if (strcmp(kind, "version") == 0) {
        MPI2DD_info.version = 7;
    } else if (strcmp(kind, "variant") == 0) {
        MPI2DD_info.variant = 9;
    } else if (strcmp(kind, "size-negative") == 0) {
        MPI2DD_info.proctable_size = -3;
    } else if (strcmp(kind, "size-huge") == 0) {
        MPI2DD_info.proctable_size = 0x7fffffff;
    } else if (strcmp(kind, "table-unmapped") == 0 || strcmp(kind, "string-unmapped") == 0 ||
               strcmp(kind, "string-unterminated") == 0) {
        /* Two pages, the second unmapped again: its address is unmapped. */
        char* p = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            die("mmap: %s", strerror(errno));
        }
        munmap(p + page, (size_t)page);
        if (strcmp(kind, "table-unmapped") == 0) {
            MPI2DD_info.proctable = MPI2DD_ADDR(p + page);
        } else if (strcmp(kind, "string-unmapped") == 0) {
            g_table[0].executable_name = MPI2DD_ADDR(p + page);
        } else {
            memset(p, 'x', (size_t)page);   /* no NUL before the unmapped page */
            g_table[0].executable_name = MPI2DD_ADDR(p);
        }
    } else if (strcmp(kind, "dir-self") == 0 || strcmp(kind, "dir-cycle") == 0) {
        /* This process lists itself as a directory (dir-self) or, in hierarchical mode,
         * its first directory lists it back (dir-cycle: made by the directory itself). */
        MPI2DD_info.mpi_flags |= MPI2DD_MPIFLAG_I_AM_METADIR;
        if (strcmp(kind, "dir-self") == 0) {
            add_dir(getpid(), g_self_exe);
        }
    } else if (strcmp(kind, "pid-missing") == 0 || strcmp(kind, "pid-missing-last") == 0) {
        g_table[kind[11] ? g_table_size - 1 : 0].pid = 0x3ffffff0;   /* above pid_max, on any host */
    } else if (strncmp(kind, "pid=", 4) == 0) {
        g_table[0].pid = atoi(kind + 4);
    } else {
        die("unknown MPI2DD_RUN_CORRUPT kind \"%s\"", kind);
    }
}

static void usage(void) {
    fprintf(stderr, "usage: mpi2dd-run [--job NAME] [--dirs K | [--rsh CMD] --host HOST:N...] -np N PROG [ARGS...]\n");
    exit(2);
}

int main(int argc, char** argv) {
    int np = -1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        if ((strcmp(argv[i], "-np") == 0 || strcmp(argv[i], "-n") == 0) && i + 1 < argc) {
            np = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--job") == 0 && i + 1 < argc) {
            g_job = argv[++i];
        } else if (strcmp(argv[i], "--dirs") == 0 && i + 1 < argc) {
            g_hier_dirs = atoi(argv[++i]);
        } else if (!mpi2dd_remote_option(argc, argv, &i)) {
            usage();
        }
    }
    int remote = mpi2dd_remote_count();
    if (np <= 0 || i >= argc || g_hier_dirs < 0 || g_hier_dirs > np || remote > (g_hier_dirs ? 0 : np)) {
        usage();
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    g_self_exe = xstrdup(n > 0 ? (self[n] = 0, self) : argv[0]);
    gethostname(g_host, sizeof g_host - 1);
    static char job_name[64];
    if (!g_job) {
        snprintf(job_name, sizeof job_name, "job%d", (int)getpid());
        g_job = job_name;
    }
    static char meta_host[256];
    snprintf(meta_host, sizeof meta_host, "%s", g_host);
    MPI2DD_info.meta_host_name = MPI2DD_ADDR(meta_host);
    MPI2DD_info.meta_executable_name = MPI2DD_ADDR(g_self_exe);
    MPI2DD_info.meta_pid = getpid();
    if (pipe(g_ctl) != 0) {
        die("pipe: %s", strerror(errno));
    }
    char* exe = absolute_program(argv[i]);
    char** args = &argv[i];
    args[0] = exe;
    char world[128];
    snprintf(world, sizeof world, "%s/world0", g_job);
    const char* corrupt_kind = getenv("MPI2DD_RUN_CORRUPT");
    if (g_hier_dirs > 0) {
        MPI2DD_info.mpi_flags = MPI2DD_MPIFLAG_I_AM_STARTER | MPI2DD_MPIFLAG_I_AM_METADIR | MPI2DD_MPIFLAG_IGNORE_QUEUE;
        pid_t* dirs = xrealloc(NULL, sizeof *dirs * (size_t)g_hier_dirs);
        for (int d = 0; d < g_hier_dirs; ++d) {
            int first = d * np / g_hier_dirs;
            int last = (d + 1) * np / g_hier_dirs;
            if (d == 0 && corrupt_kind && strcmp(corrupt_kind, "dir-cycle") == 0) {
                g_list_back = getpid();
            }
            dirs[d] = start_directory(exe, args, first, last - first, np, world, NULL, NULL, -1, -1);
            g_list_back = 0;
        }
        wait_ready("DIRREADY", dirs, g_hier_dirs);
        free(dirs);
    } else {
        pid_t* pids = xrealloc(NULL, sizeof *pids * (size_t)np);
        for (int r = 0; r < np; ++r) {
            const char* host = mpi2dd_remote_host(r, np);
            pid_t there = 0;
            pids[r] = host ? mpi2dd_remote_start(host, exe, args, r, np, world, debugged(), g_ctl[1], &there)
                           : start_rank(exe, args, r, np, world, NULL, -1, -1, g_ctl[1]);
            add_child(pids[r], r, world);
            if (host) {
                g_children[g_child_count - 1].host_pid = pids[r] = there;
            }
            add_proc(pids[r], r, world, exe, host ? host : g_host, NULL);
        }
        if (debugged()) {
            wait_ready("READY", pids, np);
        }
        free(pids);
    }
    if (corrupt_kind) {
        corrupt(corrupt_kind);
    }
#ifdef MPI2DD_ALSO_MPIR
    MPIR_proctable = xrealloc(NULL, sizeof *MPIR_proctable * (size_t)g_table_size);
    for (int r = 0; r < g_table_size; ++r) {
        MPIR_proctable[r].host_name = (char*)(uintptr_t)g_table[r].host_name;
        MPIR_proctable[r].executable_name = (char*)(uintptr_t)g_table[r].executable_name;
        MPIR_proctable[r].pid = g_table[r].pid;
    }
    MPIR_proctable_size = g_table_size;
    MPIR_debug_state = 1;
    MPIR_Breakpoint();
#endif
    raise_event(MPI2DD_DEBUG_START);
    handle_deferred();
    for (;;) {
        /* A request sent just before its rank ended is still handled. */
        int live = reap();
        char* line = next_line(live > 0 ? 100 : 0);
        if (line) {
            handle_request(line);
        }
        handle_deferred();
        if (!line && live == 0) {
            break;
        }
    }
    return g_failed ? 1 : 0;
}
