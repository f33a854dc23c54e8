/* Workloads 6 and 10: every rank of an MPI job parks a few frames deep after MPI_Init, so that a
 * debugger acquiring the job has real stacks to merge. Each rank prints "ready rank R of
 * N pid P" once parked; the job ends when mpirun is told to stop (SIGTERM). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int parked_rank = -1;   /* workload 10 compares it across the ranks */

__attribute__((noinline)) static void park(int depth) {
    if (depth > 0) {
        park(depth - 1);
        __asm__ volatile("" ::: "memory");
        return;
    }
    for (;;) {
        pause();
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parked_rank = rank;
    printf("ready rank %d of %d pid %d\n", rank, size, (int)getpid());
    fflush(stdout);
    park(rank % 3 + 1);
    MPI_Finalize();
    return 0;
}
