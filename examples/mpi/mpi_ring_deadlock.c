/* A ring that deadlocks: every rank first receives from its left neighbour (tag 7), then
 * would send to its right one. Nobody sends, so all ranks block in MPI_Recv forever: the
 * wait-for graph is one cycle 0 <- 1 <- 2 <- ... (rank r waits for rank r-1). */
#include "mpi_example_log.h"

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    int in[4] = {0}, out[4] = {1, 2, 3, 4};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    log_op("recv", left, 7, 4, MPI_INT, in, MPI_COMM_WORLD);
    MPI_Recv(in, 4, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* LINE-MARK: ring_recv */
    log_op("send", right, 7, 4, MPI_INT, out, MPI_COMM_WORLD);
    MPI_Send(out, 4, MPI_INT, right, 7, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
