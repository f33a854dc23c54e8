// An MPI job in stages, for process acquisition, breakpoints in every rank and merged
// stacks (issue 6). Every rank prints "rank R of N pid P" after MPI_Init (ground truth for
// the rank/pid table), calls compute() once, then the ranks split by parity: even ranks
// wait in a barrier in wait_even(), odd ranks in wait_odd() (two branches for `mpi
// stacks`), then all meet in a final barrier and print "rank R done".
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

int compute(int rank) {
    int v = 0;
    for (int i = 0; i <= rank; ++i) {
        v += i * i;   // LINE-MARK: compute
    }
    sink = v;
    return v;
}

static void meet(MPI_Comm comm) {
    MPI_Barrier(comm);   // LINE-MARK: meet
}

void wait_even(MPI_Comm comm) {
    meet(comm);
}

void wait_odd(MPI_Comm comm) {
    meet(comm);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d pid %d\n", rank, size, (int)getpid());
    fflush(stdout);
    compute(rank);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (rank % 2 == 0) {
        wait_even(half);
    } else {
        wait_odd(half);
    }
    // Rank 0 waits for a line on stdin when asked (argv[1] == "hold"), so that the
    // others sit in the final barrier for `mpi stacks` while it is blocked in read().
    if (argc > 1 && rank == 0) {
        char c;
        (void)!read(0, &c, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    fflush(stdout);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
