// Crashes on purpose, one way per argument, for the signal and core-file tests:
//   crash segv|bus|fpe|abrt   the named fault in a function called from main
//   crash threads             three workers wait; worker 2 dereferences NULL
//   crash usr1                raises SIGUSR1 (a handler prints it), then exits 0
//   crash wait                prints its pid, then sleeps in pause() until a signal
// Each mode prints "crash: MODE" first (tests synchronise on it), unbuffered.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int global_counter = 42;
static volatile int zero = 0;
static pthread_barrier_t barrier;

struct point {
    int x, y;
};

static void on_usr1(int sig) {
    printf("handler: got signal %d\n", sig);
}

int do_segv(int *p) {
    struct point where = {3, 4};
    (void)where;
    return *p + where.x;  // LINE-MARK: segv
}

int do_fpe(int a) {
    return a / zero;  // LINE-MARK: fpe
}

int do_bus(void) {
    FILE *f = tmpfile();
    if (f == NULL) {
        return -1;
    }
    // A page mapped past the end of an empty file: touching it raises SIGBUS.
    volatile char *page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
    if (page == MAP_FAILED) {
        return -1;
    }
    return page[16];  // LINE-MARK: bus
}

void do_abrt(void) {
    abort();  // LINE-MARK: abrt
}

static void *worker(void *arg) {
    long id = (long)arg;
    pthread_barrier_wait(&barrier);
    if (id == 2) {
        int *volatile nowhere = NULL;
        *nowhere = (int)id;  // LINE-MARK: worker_crash
    }
    pause();
    return NULL;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *mode = argc > 1 ? argv[1] : "segv";
    printf("crash: %s\n", mode);
    if (strcmp(mode, "segv") == 0) {
        return do_segv(NULL);
    }
    if (strcmp(mode, "fpe") == 0) {
        return do_fpe(global_counter);
    }
    if (strcmp(mode, "bus") == 0) {
        return do_bus();
    }
    if (strcmp(mode, "abrt") == 0) {
        do_abrt();
    }
    if (strcmp(mode, "threads") == 0) {
        pthread_t t[3];
        pthread_barrier_init(&barrier, NULL, 4);
        for (long i = 0; i < 3; ++i) {
            pthread_create(&t[i], NULL, worker, (void *)(i + 1));
        }
        pthread_barrier_wait(&barrier);
        pause();  // LINE-MARK: main_pause
    }
    if (strcmp(mode, "usr1") == 0) {
        signal(SIGUSR1, on_usr1);
        raise(SIGUSR1);  // LINE-MARK: raise
        printf("after raise\n");
        return 0;
    }
    if (strcmp(mode, "wait") == 0) {
        signal(SIGUSR1, on_usr1);
        printf("pid %d\n", (int)getpid());
        pause();  // LINE-MARK: wait_pause
        printf("woken\n");
        return 0;
    }
    return 1;
}
