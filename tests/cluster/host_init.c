/* The init of a simulated host (tests/cluster/host-up): PID 1 of the host's PID namespace.
 * It names the host (its own UTS namespace), says "ready" once on stdout, and then reaps
 * every process that ends in the host, orphans included, until it is SIGKILLed from
 * outside, which ends every process of the namespace with it.
 *
 * With OWNER (a FIFO that the test process holds open for writing, and nothing else does)
 * it also ends when its last writer is gone: a test killed before its destructors ran
 * (ctest's timeout, SIGKILL, a crash) leaves no host behind, because the kernel closes the
 * test's descriptor and the init sees POLLHUP. PR_SET_PDEATHSIG cannot do this here: the
 * init's parent is unshare, which outlives the test. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_child(int sig) { (void)sig; }

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s HOSTNAME [OWNER-FIFO]\n", argv[0]);
        return 2;
    }
    int owner = -1;
    if (argc == 3) {
        owner = open(argv[2], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (owner < 0) {
            fprintf(stderr, "%s: %s: %s\n", argv[0], argv[2], strerror(errno));
            return 1;
        }
    }
    if (sethostname(argv[1], strlen(argv[1])) != 0) {
        fprintf(stderr, "%s: sethostname %s: %s\n", argv[0], argv[1], strerror(errno));
        return 1;
    }
    /* Block SIGCHLD and wait for it with sigsuspend: an orphan that ends between the
     * last waitpid and the sleep is not missed. */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);

    printf("ready\n");
    fflush(stdout);
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(null_fd, 2);
        if (null_fd > 2) {
            close(null_fd);
        }
    }
    for (;;) {
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (owner < 0) {
            sigsuspend(&old);
            continue;
        }
        /* ppoll unblocks SIGCHLD atomically, as sigsuspend does. */
        struct pollfd p = {.fd = owner, .events = POLLIN, .revents = 0};
        if (ppoll(&p, 1, NULL, &old) > 0) {
            if (p.revents & (POLLHUP | POLLERR)) {
                return 0;   /* the owner is gone: PID 1 ends, and the namespace with it */
            }
            char drop[64];
            (void)!read(owner, drop, sizeof drop);
        }
    }
}
