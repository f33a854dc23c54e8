#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"

#include <cerrno>
#include <csignal>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace ompdbg::tracer::internal {

namespace {
int g_pipe[2] = {-1, -1};
struct sigaction g_previous{};

void on_sigchld(int sig, siginfo_t* info, void* ctx) {
    int saved = errno;
    wakeup_notify();
    // Chain to whoever handled SIGCHLD before us (e.g. a test harness reaping its own
    // children), so installing the debugger never changes the program around it.
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) {
            g_previous.sa_sigaction(sig, info, ctx);
        }
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
    }
    errno = saved;
}
}  // namespace

void wakeup_init() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
            error::send_errno("pipe");
        }
        struct sigaction sa{};
        sa.sa_sigaction = on_sigchld;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGCHLD, &sa, &g_previous);
    });
}

void wakeup_drain() {
    char buf[256];
    while (::read(g_pipe[0], buf, sizeof buf) > 0) {
    }
}

bool wakeup_wait(int timeout_ms) {
    pollfd p{g_pipe[0], POLLIN, 0};
    for (;;) {
        int r = ::poll(&p, 1, timeout_ms);
        if (r > 0) {
            return true;
        }
        if (r == 0) {
            return false;
        }
        if (errno != EINTR) {
            return true;   // treat as a wake-up: the caller re-polls waitpid anyway
        }
        // EINTR: the SIGCHLD handler just ran and left a byte; loop to see it.
    }
}

void wakeup_notify() noexcept {
    if (g_pipe[1] >= 0) {
        char c = 1;
        [[maybe_unused]] auto r = ::write(g_pipe[1], &c, 1);
    }
}

}  // namespace ompdbg::tracer::internal
