/* Workload 4: T threads (argv[1], default 256) blocked in a few frames deep, so that
 * `thread apply all bt` has real stacks to walk. Prints "ready PID" once every thread is
 * parked, then waits until its stdin closes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t all_started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static void park(int depth) {
    if (depth > 0) {
        park(depth - 1);
        __asm__ volatile("" ::: "memory");
        return;
    }
    pthread_mutex_lock(&lock);
    for (;;) {
        pthread_cond_wait(&never, &lock);
    }
}

static void* worker(void* arg) {
    pthread_barrier_wait(&all_started);
    park((int)(long)arg % 4 + 2);
    return NULL;
}

int main(int argc, char** argv) {
    int t = argc > 1 ? atoi(argv[1]) : 256;
    pthread_barrier_init(&all_started, NULL, (unsigned)t + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (long i = 0; i < t; ++i) {
        pthread_t th;
        if (pthread_create(&th, &attr, worker, (void*)i) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    pthread_barrier_wait(&all_started);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
}
