// One rank blocked in a system call while the others step (mpi_rank_step.cpp): rank 0
// receives a line through a FIFO (argv[1]) whose open(2) blocks until rank 1 opens it for
// writing, which rank 1 does only after send_line(), where a breakpoint stops the job.
// Every rank prints "rank R of N pid P" after MPI_Init and "rank R done" at its end; rank 0
// prints what it received.
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile int sink;

void send_line(int rank) {
    sink = rank;   // LINE-MARK: send_line
    sink += 1;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d pid %d\n", rank, size, (int)getpid());
    fflush(stdout);
    const char* fifo = argc > 1 ? argv[1] : "/tmp/mpi_blocked_step.fifo";
    if (rank == 0) {
        unlink(fifo);
        mkfifo(fifo, 0600);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int fd = open(fifo, O_RDONLY);   // LINE-MARK: blocked_open
        char line[64] = {0};
        ssize_t n = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
        if (fd >= 0) {
            close(fd);
        }
        unlink(fifo);
        printf("rank 0 received %s\n", n > 0 ? strtok(line, "\n") : "nothing");
    } else if (rank == 1) {
        sleep(2);   // rank 0 waits in open() by then
        send_line(rank);
        int fd = open(fifo, O_WRONLY);
        if (fd >= 0) {
            (void)!write(fd, "hello\n", 6);
            close(fd);
        }
    }
    printf("rank %d done\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
