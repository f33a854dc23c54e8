/* A healthy program with non-blocking requests pending at a barrier: every rank posts
 * MPI_Irecv from its left (tag 21) and right (tag 22) neighbours and an MPI_Isend of a large
 * buffer (rendezvous: it stays pending until the receive is posted) to its right neighbour
 * (tag 23), whose matching receive comes only after the barrier. Ranks 1.. wait in
 * MPI_Barrier; rank 0 holds before it until SIGUSR1. Then everything completes. Nothing is
 * deadlocked: the debugger must report no cycle. */
#include "mpi_example_log.h"

#define BIG (256 * 1024)

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    static int from_left[2], from_right[2], to_left[2], to_right[2];
    static int big_out[BIG], big_in[BIG];
    MPI_Request req[6];
    block_sigusr1();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    log_op("irecv", left, 21, 2, MPI_INT, from_left, MPI_COMM_WORLD);
    MPI_Irecv(from_left, 2, MPI_INT, left, 21, MPI_COMM_WORLD, &req[0]);
    log_op("irecv", right, 22, 2, MPI_INT, from_right, MPI_COMM_WORLD);
    MPI_Irecv(from_right, 2, MPI_INT, right, 22, MPI_COMM_WORLD, &req[1]);
    log_op("isend", right, 23, BIG, MPI_INT, big_out, MPI_COMM_WORLD);
    MPI_Isend(big_out, BIG, MPI_INT, right, 23, MPI_COMM_WORLD, &req[2]);
    if (rank == 0) {
        hold_until_sigusr1();
    } else {
        mpi_log("op=barrier comm=MPI_COMM_WORLD");
    }
    MPI_Barrier(MPI_COMM_WORLD); /* LINE-MARK: pending_barrier */
    MPI_Irecv(big_in, BIG, MPI_INT, left, 23, MPI_COMM_WORLD, &req[3]);
    MPI_Isend(to_right, 2, MPI_INT, right, 21, MPI_COMM_WORLD, &req[4]);
    MPI_Isend(to_left, 2, MPI_INT, left, 22, MPI_COMM_WORLD, &req[5]);
    MPI_Waitall(6, req, MPI_STATUSES_IGNORE);
    mpi_log("state=done");
    MPI_Finalize();
    return 0;
}
