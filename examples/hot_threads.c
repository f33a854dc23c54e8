/* hot_threads: N threads (argv[1], default 4) call tick() K times each (argv[2], default
 * 1000), all at once: a counting breakpoint on tick() is hit by threads that run together.
 * Worker 0 calls halfway() once, after K/2 ticks, while the others go on ticking. One more
 * thread, "spinner", spins without calling anything until the workers are done; the workers
 * start only once it spins, so that a stop among them finds it in spinner(). main prints the
 * total and "hot threads done". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

static pthread_barrier_t start_line;
static long ticks[MAX_THREADS];
static int per_thread = 1000;
static volatile int workers_done;
static volatile unsigned long spins;
static volatile int spinner_started;

void tick(long *counter) {
    ++*counter; /* LINE-MARK: tick */
}

void halfway(int index) {
    printf("worker %d halfway\n", index); /* LINE-MARK: halfway */
}

static void *spinner(void *arg) {
    (void)arg;
    spinner_started = 1;
    while (!workers_done) {
        ++spins; /* LINE-MARK: spin */
    }
    return NULL;
}

static void *worker(void *arg) {
    int index = (int)(long)arg;
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < per_thread; ++i) {
        if (index == 0 && i == per_thread / 2) {
            halfway(index);
        }
        tick(&ticks[index]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    per_thread = argc > 2 ? atoi(argv[2]) : 1000;
    if (n < 1 || n > MAX_THREADS || per_thread < 0) {
        fprintf(stderr, "hot_threads: 1..%d threads, a count >= 0\n", MAX_THREADS);
        return 2;
    }
    pthread_t tids[MAX_THREADS], spin;
    pthread_create(&spin, NULL, spinner, NULL);
    while (!spinner_started) {
    }
    pthread_barrier_init(&start_line, NULL, (unsigned)n);
    for (long i = 0; i < n; ++i) {
        pthread_create(&tids[i], NULL, worker, (void *)i);
    }
    long total = 0;
    for (int i = 0; i < n; ++i) {
        pthread_join(tids[i], NULL);
        total += ticks[i];
    }
    workers_done = 1;
    pthread_join(spin, NULL);
    printf("total %ld\n", total);
    printf("hot threads done\n");
    return 0;
}
