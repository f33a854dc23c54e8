// An MPI job in stages, for process acquisition, breakpoints in every rank and merged
// stacks (issue 6). Every rank prints "rank R of N pid P" after MPI_Init (ground truth for
// the rank/pid table) and calls compute() once. With the argument "park" the ranks then
// park where `mpi stacks` can see them, on two branches: even ranks through wait_even(),
// odd ranks through wait_odd(). Ranks 1..N-1 tell rank 0 from inside park() that they are
// there; rank 0 calls all_parked() once it heard from all of them, so a breakpoint on
// all_parked() stops the job with every rank inside park()/park_root(). They spin until a
// debugger sets `released` (print released = 1). Then every rank prints "rank R done".
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;
volatile int released;
int my_rank = -1;   // this process's rank, for `print my_rank` in every rank

int compute(int rank) {
    int v = 0;
    for (int i = 0; i <= rank; ++i) {
        v += i * i;   // LINE-MARK: compute
    }
    sink = v;   // LINE-MARK: compute_sink
    return v;
}

void all_parked(int count) {
    sink = count;   // LINE-MARK: all_parked
}

static void spin(void) {
    while (!released) {
        usleep(1000);
    }
}

void park(int rank) {
    MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    spin();
}

void park_root(int size) {
    for (int i = 1; i < size; ++i) {
        int from = 0;
        MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    all_parked(size);
    spin();
}

void wait_even(int rank, int size) {
    if (rank == 0) {
        park_root(size);
    } else {
        park(rank);
    }
}

void wait_odd(int rank) {
    park(rank);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank = rank;
    printf("rank %d of %d pid %d\n", rank, size, (int)getpid());
    fflush(stdout);
    compute(rank);   // LINE-MARK: call_compute
    if (argc > 1 && strcmp(argv[1], "park") == 0) {
        if (rank % 2 == 0) {
            wait_even(rank, size);
        } else {
            wait_odd(rank);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);   // LINE-MARK: barrier
    printf("rank %d done\n", rank);   // LINE-MARK: done
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
