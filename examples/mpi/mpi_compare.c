/* One expression across the ranks (`mpi compare`, `rank where`, issue 20). Every rank holds
 * its own values in solve() and prints them ("truth: compare rank=R ...", ground truth for
 * the tests) before ranks 1..N-1 tell rank 0 that they are in solve(); rank 0 then calls
 * checkpoint(), so a breakpoint there stops the job with every rank inside solve(). With
 * the argument "exit-last" the last rank leaves instead: it finalizes and exits (run it with
 * `--mca async_mpi_finalize 1`, so MPI_Finalize does not wait for the others), and rank 0
 * calls checkpoint() once that process is gone. The ranks spin until a debugger sets
 * `released` (print released = 1). mpirun forwards the ranks' stdout only while it runs,
 * so the truth lines also go to the file MPI_COMPARE_TRUTH names (one O_APPEND write each). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stats {
    int iter;
    double norm;
};

static volatile int sink;
volatile int released;
int my_rank = -1;

void checkpoint(int rank) {
    sink = rank;   /* LINE-MARK: compare_checkpoint */
}

/* Whether process `pid` ended: gone, or a zombie nobody reaped yet. */
static int ended(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return 1;
    }
    char state = '?';
    int n = fscanf(f, "%*d %*s %c", &state);
    fclose(f);
    return n == 1 && (state == 'Z' || state == 'X');
}

void solve(int rank, int size, int exit_last, int last_pid) {
    double resid = rank == size - 1 ? 0.5 : 0.25;
    int counts[4] = {4, 5, 6, 7};
    if (rank == 1) {
        counts[2] = -6;
    }
    struct stats st = {10, rank == 2 ? 2.0 : 1.0};
    char line[256];
    int n = snprintf(line, sizeof line, "truth: compare rank=%d pid=%d resid=%.17g counts2=%d st.norm=%g\n", rank,
                     (int)getpid(), resid, counts[2], st.norm);
    fputs(line, stdout);
    fflush(stdout);
    const char* file = getenv("MPI_COMPARE_TRUTH");
    if (file != NULL && *file != '\0') {
        int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) < 0) {
                /* best effort: the test then misses a line and says so */
            }
            close(fd);
        }
    }
    if (exit_last && rank == size - 1) {
        return;   /* main finalizes and exits */
    }
    if (rank == 0) {
        int others = exit_last ? size - 2 : size - 1;
        for (int i = 0; i < others; ++i) {
            int from = 0;
            MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        while (exit_last && !ended(last_pid)) {
            usleep(1000);
        }
        checkpoint(rank);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    while (!released) {
        usleep(1000);
    }
    sink = (int)(resid + st.norm + counts[0]);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank = rank;
    int exit_last = argc > 1 && strcmp(argv[1], "exit-last") == 0;
    int last_pid = (int)getpid();
    MPI_Bcast(&last_pid, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    solve(rank, size, exit_last, last_pid);
    if (exit_last && rank == size - 1) {
        MPI_Finalize();
        printf("rank %d exits\n", rank);
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
