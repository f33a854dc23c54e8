/* Four threads wait at a barrier, then each calls hit() `rounds` times (argv[1], default
   3) at the same moment; the program prints the total number of calls. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
static pthread_barrier_t barrier;
static int rounds = 3;
static volatile int calls;

__attribute__((noinline)) void hit(void) { __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST); }

__attribute__((noinline)) void after_join(void) { __asm__ volatile("" ::: "memory"); }

static void* worker(void* arg) {
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    for (int r = 0; r < rounds; ++r) {
        pthread_barrier_wait(&barrier);
        hit();
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    pthread_t t[NTHREADS];
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; ++i) pthread_create(&t[i], NULL, worker, (void*)(long)i);
    for (int i = 0; i < NTHREADS; ++i) pthread_join(t[i], NULL);
    after_join();
    printf("calls=%d\n", calls);
    return 0;
}
