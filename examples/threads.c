/* threads: N worker threads (argv[1], default 4) named "worker-<i>" that all call
 * worker() together: a barrier makes them reach the line marked `hit` at about the same
 * time, so a breakpoint there is hit by several threads at once. Each thread sums
 * 1..(1000 * (i + 1)) and main prints every result, then "threads done". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

struct work {
    int index;          /* 0 .. nthreads-1 */
    long limit;         /* sum 1..limit */
    long result;
};

static pthread_barrier_t start_line;
static struct work works[MAX_THREADS];
int nthreads = 4;

long worker(struct work *w) {
    long sum = 0;
    for (long i = 1; i <= w->limit; ++i) {
        sum += i; /* LINE-MARK: loop */
    }
    w->result = sum; /* LINE-MARK: hit */
    return sum;
}

static void *thread_main(void *arg) {
    struct work *w = arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&start_line); /* LINE-MARK: barrier */
    worker(w); /* LINE-MARK: call */
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        nthreads = atoi(argv[1]);
    }
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "threads: count must be 1..%d\n", MAX_THREADS);
        return 2;
    }
    pthread_t tids[MAX_THREADS];
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; ++i) {
        works[i].index = i;
        works[i].limit = 1000L * (i + 1);
        pthread_create(&tids[i], NULL, thread_main, &works[i]);
    }
    for (int i = 0; i < nthreads; ++i) {
        pthread_join(tids[i], NULL); /* LINE-MARK: join */
    }
    for (int i = 0; i < nthreads; ++i) {
        printf("thread %d result %ld\n", i, works[i].result);
    }
    printf("threads done\n");
    pthread_barrier_destroy(&start_line);
    return 0; /* LINE-MARK: end */
}
