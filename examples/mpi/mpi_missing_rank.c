/* One rank missing from a collective: every rank but rank 0 enters MPI_Barrier; rank 0
 * holds in hold_until_sigusr1() until SIGUSR1, then joins. The program wraps MPI_Barrier
 * through the MPI profiling interface, as a tool would, so that each rank logs
 * `state=in_barrier` from inside the call: once it is logged the rank is in MPI_Barrier,
 * which it cannot leave before rank 0 arrives. After SIGUSR1 to rank 0 every rank logs
 * `state=done`. */
#include "mpi_example_log.h"

int MPI_Barrier(MPI_Comm comm) {
    mpi_log("state=in_barrier");
    return PMPI_Barrier(comm);
}

int main(int argc, char** argv) {
    int rank = 0;
    block_sigusr1();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    log_rank = rank;
    if (rank == 0) {
        hold_until_sigusr1();
    }
    MPI_Barrier(MPI_COMM_WORLD); /* LINE-MARK: missing_rank_barrier */
    mpi_log("state=done");
    MPI_Finalize();
    return 0;
}
