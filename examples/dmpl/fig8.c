/* The DMPL paper's Fig. 8 (Cownie et al., 2004): the threadprivate `a` counts the iterations
 * each thread performs. Built with clang (native TLS and -fnoopenmp-use-tls, which keeps the
 * copies in libomp's threadprivate cache) and with gcc (libgomp, native TLS). */
#include <omp.h>
#include <stdio.h>
int a = 0;

#pragma omp threadprivate(a)
void foo (int i)
{
    printf ("id=%d, i=%d, a= %d\n", omp_get_thread_num(), i, ++a);
    fflush (stdout);
    return; /* LINE-MARK: fig8-return */
}

const int tcount = 4;
const int titers = 10;

int main (int argc, char **argv)
{
    int i;
    omp_set_num_threads (tcount);
    omp_set_dynamic (0);
    #pragma omp parallel for /* LINE-MARK: fig8-pragma */
    for (i = 0; i < titers; i++)
        {foo (i);} /* LINE-MARK: fig8-call */
    return 0; /* LINE-MARK: fig8-end */
}
