/* A tag mismatch: rank 0 sends to rank 1 with tag 7 (small, so it completes eagerly), but
 * rank 1 waits for tag 8. Rank 1 blocks in MPI_Recv forever; the others wait in
 * MPI_Barrier for it. Rank 1 looks starved: the rank it waits for is in a collective, and
 * the message with tag 7 sits in rank 1's unexpected queue. */
#include "mpi_example_log.h"

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    int buf[2] = {7, 7};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    if (rank == 0) {
        log_op("send", 1, 7, 2, MPI_INT, buf, MPI_COMM_WORLD);
        MPI_Send(buf, 2, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        /* Rank 0's message is taken in first (MPI_Iprobe does not receive it): it waits
         * unexpected while rank 1 blocks on the tag it does not have. */
        int flag = 0;
        while (!flag) {
            MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        log_op("recv", 0, 8, 2, MPI_INT, buf, MPI_COMM_WORLD);
        MPI_Recv(buf, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* LINE-MARK: mismatch_recv */
    }
    mpi_log("op=barrier comm=MPI_COMM_WORLD");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
