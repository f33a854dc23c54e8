/* Unexpected messages with tags 0 and 42: rank 1 sends rank 0 small messages with tags 0
 * and 42 on MPI_COMM_WORLD, one on a duplicated communicator named "side", a large one
 * (MPI_Isend, beyond the eager limit: a rendezvous) and last a tag-99 "sentinel", all before
 * rank 0 posts any receive. After MPI_Barrier, rank 0 probes until the sentinel arrived
 * (MPI_Iprobe does not receive it; messages of one sender are matched in order, so every
 * earlier one is in rank 0's unexpected queue by then) and calls all_arrived(): the place
 * a debugger stops to look at the queue. Then rank 0 receives everything in order, logs
 * what it got, and every rank finishes. Other ranks only take part in the collectives. */
#include "mpi_example_log.h"

#define BIG_COUNT 50000

struct message {
    int tag, count, side;
};

static const struct message messages[] = {
    {0, 1, 0}, {42, 2, 0}, {0, 3, 0}, {42, 4, 1}, {42, 5, 0}, {0, 6, 0},
};
#define N_MESSAGES (int)(sizeof messages / sizeof messages[0])

/* Rank 0 stops here with every message of rank 1 waiting unexpected. */
__attribute__((noinline)) void all_arrived(int count) {
    mpi_log("state=all-arrived count=%d", count);
}

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    static int small[N_MESSAGES][8];
    static int big[BIG_COUNT];
    int sentinel = 99;
    MPI_Comm side;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    MPI_Comm_set_name(side, "side");
    log_rank = rank;
    if (rank == 1) {
        MPI_Request big_req;
        for (int i = 0; i < N_MESSAGES; ++i) {
            const struct message* m = &messages[i];
            MPI_Comm comm = m->side ? side : MPI_COMM_WORLD;
            small[i][0] = i;
            log_op("send", 0, m->tag, m->count, MPI_INT, small[i], comm);
            MPI_Send(small[i], m->count, MPI_INT, 0, m->tag, comm);
        }
        log_op("isend", 0, 42, BIG_COUNT, MPI_INT, big, MPI_COMM_WORLD);
        MPI_Isend(big, BIG_COUNT, MPI_INT, 0, 42, MPI_COMM_WORLD, &big_req);
        log_op("send", 0, 99, 1, MPI_INT, &sentinel, MPI_COMM_WORLD);
        MPI_Send(&sentinel, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&big_req, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        int flag = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        while (!flag) {
            MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        all_arrived(N_MESSAGES + 2);
        int in[8];
        MPI_Status st;
        int got = 0;
        for (int i = 0; i < N_MESSAGES; ++i) {
            const struct message* m = &messages[i];
            MPI_Recv(in, 8, MPI_INT, 1, m->tag, m->side ? side : MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &got);
            mpi_log("op=received peer=1 tag=%d count=%d first=%d", st.MPI_TAG, got, in[0]);
        }
        MPI_Recv(big, BIG_COUNT, MPI_INT, 1, 42, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        mpi_log("op=received peer=1 tag=%d count=%d", st.MPI_TAG, got);
        MPI_Recv(in, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &st);
        mpi_log("op=received peer=1 tag=%d count=1 first=%d", st.MPI_TAG, in[0]);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&side);
    mpi_log("state=done");
    MPI_Finalize();
    return 0;
}
