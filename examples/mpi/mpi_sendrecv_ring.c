/* A healthy halo exchange, the most common MPI pattern: each rank trades a block with both
 * ring neighbours through MPI_Sendrecv (to the right while receiving from the left, tag 1;
 * then to the left while receiving from the right, tag 2), in an endless loop. Every 64
 * iterations an MPI_Allreduce asks whether any rank got SIGUSR1 (so every rank leaves after
 * the same iteration). Argument: the block's size in ints (default 16: 64 bytes, an eager
 * message; 65536 ints = 256 KiB is above every Open MPI eager limit, a rendezvous one).
 *
 * Ground truth for tests (MPI-LOG lines, mpi_example_log.h): each rank logs its first
 * exchange's operations (op=sendrecv-send / op=sendrecv-recv) before posting them, rank 0
 * logs `state=looping iterations=N` every 1024 iterations (64 for blocks above 4 KiB), and at the end each rank logs
 * `state=done iterations=N data_ok=1` (each block received carried its sender's rank and
 * the iteration). */
#include "mpi_example_log.h"

static volatile sig_atomic_t released;

static void on_usr1(int sig) {
    (void)sig;
    released = 1;
}

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    signal(SIGUSR1, on_usr1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    int count = argc > 1 ? atoi(argv[1]) : 16;
    if (count < 2) {
        count = 2;
    }
    int* out = calloc((size_t)count, sizeof(int));
    int* from_left = calloc((size_t)count, sizeof(int));
    int* from_right = calloc((size_t)count, sizeof(int));
    if (out == NULL || from_left == NULL || from_right == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    long iterations = 0;
    long log_every = count > 1024 ? 64 : 1024;   /* a few lines a second either way */
    int data_ok = 1;
    for (;;) {
        out[0] = rank;
        out[1] = (int)(iterations & 0x7fffffff);
        if (iterations == 0) {
            log_op("sendrecv-send", right, 1, count, MPI_INT, out, MPI_COMM_WORLD);
            log_op("sendrecv-recv", left, 1, count, MPI_INT, from_left, MPI_COMM_WORLD);
        }
        MPI_Sendrecv(out, count, MPI_INT, right, 1, from_left, count, MPI_INT, left, 1, MPI_COMM_WORLD, /* LINE-MARK: ring_sendrecv_right */
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(out, count, MPI_INT, left, 2, from_right, count, MPI_INT, right, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        data_ok = data_ok && from_left[0] == left && from_right[0] == right && from_left[1] == out[1] &&
                  from_right[1] == out[1];
        ++iterations;
        if (rank == 0 && iterations % log_every == 0) {
            mpi_log("state=looping iterations=%ld", iterations);
        }
        if (iterations % 64 == 0) {
            int stop = released ? 1 : 0, any = 0;
            MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (any) {
                break;
            }
        }
    }
    mpi_log("state=done iterations=%ld data_ok=%d", iterations, data_ok);
    free(out);
    free(from_left);
    free(from_right);
    MPI_Finalize();
    return 0;
}
