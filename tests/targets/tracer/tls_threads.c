/* Thread-local storage and pthread keys for the thread_db tests. The main thread and
 * THREADS workers each set tls_var = 100 + index (main: index 0), a pthread key value and a
 * __thread variable of a dlopen()ed library, print what the debugger must find:
 *   "tls index=I lwp=L tls_var=V &tls_var=P self=S key=K keyval=X &lib_tls=Q"
 * then all meet at a barrier; the workers park on a mutex the main thread holds, and the
 * main thread calls stop_here() (the tests' breakpoint) with every thread alive. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4

__thread int tls_var = 7;
__thread char tls_pad[100] = {1};
static pthread_key_t key;
static pthread_barrier_t barrier;
static pthread_mutex_t park = PTHREAD_MUTEX_INITIALIZER;
static int *(*lib_tls_addr)(int);
volatile int sink;

__attribute__((noinline)) void stop_here(int index) { sink = index; }

static void report(int index) {
    tls_var = 100 + index;
    pthread_setspecific(key, (void *)(long)(0x1000 + index));
    int *lib = lib_tls_addr ? lib_tls_addr(200 + index) : NULL;
    printf("tls index=%d lwp=%ld tls_var=%d &tls_var=%p self=%#lx key=%u keyval=%#x &lib_tls=%p\n",
           index, (long)syscall(SYS_gettid), tls_var, (void *)&tls_var,
           (unsigned long)pthread_self(), (unsigned)key, 0x1000 + index, (void *)lib);
    fflush(stdout);
    pthread_barrier_wait(&barrier);
    if (index == 0) {
        stop_here(index);
        pthread_mutex_unlock(&park);
    } else {
        pthread_mutex_lock(&park);
        pthread_mutex_unlock(&park);
    }
}

static void *worker(void *arg) {
    report((int)(long)arg);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        lib_tls_addr = (int *(*)(int))dlsym(h, "lib_tls_addr");
    }
    pthread_key_create(&key, NULL);
    pthread_mutex_lock(&park);
    pthread_barrier_init(&barrier, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; ++i) {
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    }
    report(0);
    for (int i = 0; i < THREADS; ++i) {
        pthread_join(t[i], NULL);
    }
    return 0;
}
