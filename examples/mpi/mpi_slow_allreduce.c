/* Every rank in the same collective, and the job progressing: MPI_Allreduce with a user
 * reduction operation, slow_sum(), that works on (a usleep loop, so that the thread keeps
 * waking up) until the rank gets SIGUSR1. Each rank logs `op=in_reduce` the first time the
 * library calls slow_sum, so a test knows that every rank is inside MPI_Allreduce; after
 * SIGUSR1 every rank finishes and logs `state=done sum=S` (S = 0+1+...+size-1). Forces the
 * recursive-doubling algorithm, in which every rank applies the operation. */
#include <stdlib.h>

#include "mpi_example_log.h"

static volatile sig_atomic_t released;
static int logged;

static void on_usr1(int sig) {
    (void)sig;
    released = 1;
}

void slow_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
    (void)type;
    if (!logged) {
        logged = 1;
        mpi_log("op=in_reduce");
    }
    while (!released) {
        usleep(1000); /* LINE-MARK: slow_sum_wait */
    }
    for (int i = 0; i < *len; ++i) {
        ((int*)inout)[i] += ((int*)in)[i];
    }
}

int main(int argc, char** argv) {
    int rank = 0, size = 0, sum = 0;
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
    setenv("OMPI_MCA_coll_tuned_allreduce_algorithm", "3", 1);
    signal(SIGUSR1, on_usr1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    MPI_Op op;
    MPI_Op_create(slow_sum, 1, &op);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, op, MPI_COMM_WORLD); /* LINE-MARK: slow_allreduce */
    mpi_log("state=done sum=%d", sum);
    MPI_Op_free(&op);
    MPI_Finalize();
    return 0;
}
