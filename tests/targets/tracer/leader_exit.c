/* The main thread calls pthread_exit while a worker keeps printing: the leader becomes a
   zombie that reports nothing until the whole process ends. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void* worker(void* arg) {
    (void)arg;
    for (int i = 0; i < 100000; ++i) {
        printf("worker %d\n", i);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
