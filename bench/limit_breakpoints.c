/* The physical limit of workload 1 (the "naive ptrace loop"): launch PROGRAM with
 * ASLR off, plant an int3 at load base + OFFSET (the function's address in the file), and
 * on each hit rewind the pc, restore the byte, single-step, re-plant and continue. Nothing
 * else: no symbols, no thread handling, no output per hit.
 *
 *   limit_breakpoints OFFSET_HEX PROGRAM [ARGS...]   → prints "limit-hits N" on stderr */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char* what) {
    perror(what);
    exit(2);
}

static uint64_t load_base(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE* f = fopen(path, "r");
    if (!f) {
        die("maps");
    }
    unsigned long long lo = 0;
    if (fscanf(f, "%llx", &lo) != 1) {
        die("maps format");
    }
    fclose(f);
    return lo;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s OFFSET_HEX PROGRAM [ARGS...]\n", argv[0]);
        return 2;
    }
    uint64_t offset = strtoull(argv[1], NULL, 16);
    pid_t pid = fork();
    if (pid < 0) {
        die("fork");
    }
    if (pid == 0) {
        personality(ADDR_NO_RANDOMIZE);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
        die("exec stop");
    }
    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void*)(long)PTRACE_O_EXITKILL);
    uint64_t addr = load_base(pid) + offset;
    errno = 0;
    long orig = ptrace(PTRACE_PEEKDATA, pid, (void*)addr, NULL);
    if (errno != 0) {
        die("peek");
    }
    long patched = (orig & ~0xffL) | 0xcc;
    if (ptrace(PTRACE_POKEDATA, pid, (void*)addr, (void*)patched) < 0) {
        die("poke");
    }
    long hits = 0;
    int sig = 0;
    for (;;) {
        ptrace(PTRACE_CONT, pid, NULL, (void*)(long)sig);
        sig = 0;
        if (waitpid(pid, &status, 0) != pid) {
            die("waitpid");
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            break;
        }
        if (WSTOPSIG(status) != SIGTRAP) {
            sig = WSTOPSIG(status);
            continue;
        }
        struct user_regs_struct regs;
        ptrace(PTRACE_GETREGS, pid, NULL, &regs);
        if (regs.rip - 1 != addr) {
            continue;
        }
        ++hits;
        regs.rip = addr;
        ptrace(PTRACE_SETREGS, pid, NULL, &regs);
        ptrace(PTRACE_POKEDATA, pid, (void*)addr, (void*)orig);
        ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL);
        if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
            break;
        }
        ptrace(PTRACE_POKEDATA, pid, (void*)addr, (void*)patched);
    }
    fprintf(stderr, "limit-hits %ld\n", hits);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
