/* A healthy job whose ranks spend their time in one collective: MPI_Allreduce over
 * MPI_COMM_WORLD in a tight loop, so that at any moment nearly every rank is busy inside
 * MPI_Allreduce, at the same call site. Each rank logs `state=looping` after its first 100
 * reductions; the loop ends when some rank got SIGUSR1 (the flag is part of the
 * reduction, so every rank leaves after the same iteration), then each rank logs
 * `state=done iterations=N sum=S` (S = 0+1+...+size-1 on every iteration). */
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
    long iterations = 0;
    int in[2], out[2] = {0, 0};
    int sums_ok = 1;
    for (;;) {
        in[0] = rank;
        in[1] = released ? 1 : 0;
        MPI_Allreduce(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* LINE-MARK: loop_allreduce */
        ++iterations;
        sums_ok = sums_ok && out[0] == size * (size - 1) / 2;
        if (iterations == 100) {
            mpi_log("state=looping");
        }
        if (out[1] != 0) {
            break;
        }
    }
    mpi_log("state=done iterations=%ld sum=%d sums_ok=%d", iterations, out[0], sums_ok);
    MPI_Finalize();
    return 0;
}
