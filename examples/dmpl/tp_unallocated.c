/* A threadprivate that one thread of the team has not touched yet: built with clang
 * -fnoopenmp-use-tls, a thread's copy exists in libomp's cache only after its first access.
 * At checkpoint_first() thread 0 has written a=42 and thread 1 has no copy yet
 * (DMPL_tls_unallocated); at checkpoint_second() thread 1 has written a=43. */
#include <omp.h>
#include <stdio.h>

int a = 7;
#pragma omp threadprivate(a)

void checkpoint_first(void) {}  /* LINE-MARK: tp-first */
void checkpoint_second(void) {} /* LINE-MARK: tp-second */

int main(void) {
    omp_set_dynamic(0);
    #pragma omp parallel num_threads(2)
    {
        /* Both threads exist and know their OpenMP identity from here on. */
        #pragma omp barrier
        if (omp_get_thread_num() == 0) {
            a = 42;
            printf("thread 0 a=%d at %p\n", a, (void*)&a);
            fflush(stdout);
            checkpoint_first();
        }
        #pragma omp barrier
        if (omp_get_thread_num() == 1) {
            a = 43;
            printf("thread 1 a=%d at %p\n", a, (void*)&a);
            fflush(stdout);
            checkpoint_second();
        }
        #pragma omp barrier
    }
    return 0;
}
