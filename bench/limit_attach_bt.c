/* The physical limit of workload 4: attach to every thread of a running process, read
 * each thread's registers and walk its frame-pointer chain with process_vm_readv (the bare
 * memory traffic of a backtrace, without any symbol or unwind-table lookup), detach.
 * Usage: bench_limit_attach_bt PID. Prints "limit-done threads=N frames=F". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 4096
#define MAX_FRAMES 64

static int read_words(pid_t pid, uint64_t addr, uint64_t* out, size_t n) {
    struct iovec local = {out, n * sizeof *out};
    struct iovec remote = {(void*)(uintptr_t)addr, n * sizeof *out};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)(n * sizeof *out) ? 0 : -1;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PID\n", argv[0]);
        return 2;
    }
    pid_t pid = atoi(argv[1]);
    static pid_t tids[MAX_THREADS];
    int n = 0;
    /* Threads may start while we attach: re-read the task list until it stops growing. */
    for (int pass = 0; pass < 3; ++pass) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", pid);
        DIR* d = opendir(path);
        if (d == NULL) {
            perror(path);
            return 1;
        }
        int before = n;
        struct dirent* e;
        while ((e = readdir(d)) != NULL && n < MAX_THREADS) {
            pid_t tid = atoi(e->d_name);
            int known = tid <= 0;
            for (int i = 0; i < n && !known; ++i) {
                known = tids[i] == tid;
            }
            if (known) {
                continue;
            }
            if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0 || ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
                if (errno == ESRCH) {
                    continue;
                }
                perror("ptrace");
                return 1;
            }
            tids[n++] = tid;
        }
        closedir(d);
        if (n == before) {
            break;
        }
    }
    long frames = 0;
    for (int i = 0; i < n; ++i) {
        int status;
        if (waitpid(tids[i], &status, __WALL) < 0) {
            perror("waitpid");
            return 1;
        }
        struct user_regs_struct regs;
        if (ptrace(PTRACE_GETREGS, tids[i], 0, &regs) != 0) {
            perror("PTRACE_GETREGS");
            return 1;
        }
        /* The frame-pointer chain: [rbp] = caller's rbp, [rbp+8] = return address. */
        uint64_t fp = regs.rbp;
        ++frames;
        for (int f = 0; f < MAX_FRAMES && fp != 0; ++f) {
            uint64_t pair[2];
            if (read_words(tids[i], fp, pair, 2) != 0 || pair[0] <= fp) {
                break;
            }
            ++frames;
            fp = pair[0];
        }
    }
    for (int i = 0; i < n; ++i) {
        ptrace(PTRACE_DETACH, tids[i], 0, 0);
    }
    printf("limit-done threads=%d frames=%ld\n", n, frames);
    return 0;
}
