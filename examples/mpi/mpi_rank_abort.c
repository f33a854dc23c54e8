/* A job in which one rank crashes: rank 2 (of 3 or more) calls abort() in fail_here()
 * after logging `state=aborting`; every other rank waits in MPI_Barrier for it. Run each
 * rank under a debugger (or with core dumps enabled) to get the crashed rank's core, the
 * input of `ompdbg triage --core` (issue 10). */
#include <stdlib.h>

#include "mpi_example_log.h"

void fail_here(int rank) {
    mpi_log("state=aborting");
    if (rank >= 0) {
        abort(); /* LINE-MARK: rank_abort */
    }
}

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    if (rank == 2) {
        fail_here(rank);
    }
    mpi_log("op=barrier comm=MPI_COMM_WORLD");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
