/* Unexpected messages pile up: every rank but 0 sends 3 small messages to rank 0 (tags
 * 100 + 10*rank + i, i+1 ints), which receives none of them yet. Rank 0 probes until all
 * have arrived (MPI_Iprobe does not receive them), logs `state=all-arrived`, then every rank
 * holds until SIGUSR1; after it rank 0 receives them all and everybody finishes. */
#include "mpi_example_log.h"

#define PER_RANK 3

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    static int data[PER_RANK][PER_RANK];
    block_sigusr1();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    if (rank != 0) {
        for (int i = 0; i < PER_RANK; ++i) {
            int tag = 100 + 10 * rank + i;
            data[i][0] = tag;
            log_op("send", 0, tag, i + 1, MPI_INT, data[i], MPI_COMM_WORLD);
            MPI_Send(data[i], i + 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
        }
    } else {
        for (int src = 1; src < size; ++src) {
            for (int i = 0; i < PER_RANK; ++i) {
                int flag = 0;
                while (!flag) {
                    MPI_Iprobe(src, 100 + 10 * src + i, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                }
            }
        }
        mpi_log("state=all-arrived count=%d", (size - 1) * PER_RANK);
    }
    hold_until_sigusr1();
    if (rank == 0) {
        int in[PER_RANK];
        for (int src = 1; src < size; ++src) {
            for (int i = 0; i < PER_RANK; ++i) {
                MPI_Recv(in, i + 1, MPI_INT, src, 100 + 10 * src + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_log("state=done");
    MPI_Finalize();
    return 0;
}
