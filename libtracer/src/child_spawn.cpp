// The launched process before its execve, sharing the debugger's memory (see
// internal/child_spawn.hpp for why and what that forbids).

#include "internal/child_spawn.hpp"

#include <cerrno>
#include <csignal>
#include <new>

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/syscall.h>

namespace ompdbg::tracer::internal {

namespace {

constexpr std::size_t stack_size = 64 * 1024;

// The child runs only code of this file, without sanitizer instrumentation (its stack is
// none the runtime knows) and without libc: a system call returns -errno instead of
// setting errno.
#define CHILD_CODE __attribute__((no_sanitize_address, no_sanitize("undefined"), noinline))

CHILD_CODE long sys(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0) {
    long ret;
    register long r10 asm("r10") = a4;
    asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}

// The kernel's struct sigaction (rt_sigaction), not libc's.
struct kernel_sigaction {
    void* handler;
    unsigned long flags;
    void* restorer;
    unsigned long mask;
};

struct child_start {
    const child_plan* plan;
    unsigned long signal_mask;   ///< the debugger's, restored for the program
};

[[noreturn]] CHILD_CODE void child_fail(const child_plan& p, int stage, long err) {
    int msg[2] = {stage, static_cast<int>(-err)};
    sys(SYS_write, p.err_fd, reinterpret_cast<long>(msg), sizeof msg);
    for (;;) {
        sys(SYS_exit, 127);
    }
}

// Signals the debugger handles go back to their default action: a handler of ours must
// not run in a process sharing our memory (ignored ones stay ignored, as across fork and
// exec).
CHILD_CODE void default_handlers() {
    for (long sig = 1; sig < 65; ++sig) {
        if (sig == SIGKILL || sig == SIGSTOP) {
            continue;
        }
        kernel_sigaction act;
        act.handler = nullptr;
        if (sys(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&act), sizeof act.mask) != 0) {
            continue;
        }
        if (act.handler != reinterpret_cast<void*>(SIG_DFL) && act.handler != reinterpret_cast<void*>(SIG_IGN)) {
            kernel_sigaction dfl;
            dfl.handler = reinterpret_cast<void*>(SIG_DFL);
            dfl.flags = 0;
            dfl.restorer = nullptr;
            dfl.mask = 0;
            sys(SYS_rt_sigaction, sig, reinterpret_cast<long>(&dfl), 0, sizeof dfl.mask);
        }
    }
}

// `path` opened for writing (created 0644, appended to or truncated) as descriptor `fd`;
// a negative errno when it cannot be.
CHILD_CODE long open_as(const char* path, bool append, long fd) {
    long opened = sys(SYS_open, reinterpret_cast<long>(path), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
    if (opened < 0) {
        return opened;
    }
    long r = sys(SYS_dup2, opened, fd);
    if (opened != fd) {
        sys(SYS_close, opened);
    }
    return r < 0 ? r : 0;
}

CHILD_CODE int child_main(void* arg) {
    const auto& start = *static_cast<const child_start*>(arg);
    const child_plan& p = *start.plan;
    sys(SYS_close, p.close_fds[0]);
    sys(SYS_close, p.close_fds[1]);
    default_handlers();
    char c;
    while (sys(SYS_read, p.go_fd, reinterpret_cast<long>(&c), 1) == -EINTR) {
    }
    if (p.stdin_path != nullptr) {
        long fd = sys(SYS_open, reinterpret_cast<long>(p.stdin_path), O_RDONLY);
        long r = fd < 0 ? fd : sys(SYS_dup2, fd, 0);
        if (r < 0) {
            child_fail(p, 1, r);
        }
        sys(SYS_close, fd);
    }
    if (p.stdout_path != nullptr) {
        if (long r = open_as(p.stdout_path, p.stdout_append, 1); r < 0) {
            child_fail(p, 2, r);
        }
    } else if (p.stdout_fd >= 0 && p.stdout_fd != 1) {
        if (long r = sys(SYS_dup2, p.stdout_fd, 1); r < 0) {
            child_fail(p, 2, r);
        }
    }
    if (p.stderr_path != nullptr) {
        if (long r = open_as(p.stderr_path, p.stderr_append, 2); r < 0) {
            child_fail(p, 4, r);
        }
    } else if (p.stderr_to_stdout) {
        if (long r = sys(SYS_dup2, 1, 2); r < 0) {
            child_fail(p, 4, r);
        }
    }
    if (p.cwd != nullptr) {
        if (long r = sys(SYS_chdir, reinterpret_cast<long>(p.cwd)); r < 0) {
            child_fail(p, 3, r);
        }
    }
    if (p.no_aslr) {
        long persona = sys(SYS_personality, 0xffffffff);
        if (persona >= 0) {
            sys(SYS_personality, persona | ADDR_NO_RANDOMIZE);
        }
    }
    sys(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&start.signal_mask), 0, sizeof start.signal_mask);
    long r = sys(SYS_execve, reinterpret_cast<long>(p.path), reinterpret_cast<long>(p.argv),
                 reinterpret_cast<long>(p.envp));
    child_fail(p, 0, r);
}

}  // namespace

child_stack::~child_stack() {
    if (base_ != nullptr) {
        ::munmap(base_, size_);
    }
}

pid_t spawn_child(const child_plan& plan, child_stack& stack) {
    void* base = ::mmap(nullptr, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) {
        return -1;
    }
    stack.base_ = base;
    stack.size_ = stack_size;
    // Every signal blocked from before the clone until the child's execve (it restores the
    // mask then) and in the debugger until the clone returns.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    // What the child reads goes at the bottom of its stack (which grows down from the top),
    // not in this frame: this function returns while the child may still run. The plan is
    // the caller's, kept until the child has exec'd or died.
    auto* start = new (base) child_start{&plan, 0};
    static_assert(sizeof(sigset_t) >= sizeof start->signal_mask);
    __builtin_memcpy(&start->signal_mask, &old, sizeof start->signal_mask);
    pid_t pid = ::clone(child_main, static_cast<char*>(base) + stack_size, CLONE_VM | SIGCHLD, start);
    int saved = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = saved;
    return pid;
}

}  // namespace ompdbg::tracer::internal
