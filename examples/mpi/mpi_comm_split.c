/* Named and split communicators: MPI_COMM_WORLD is duplicated as "dup_world" and split by
 * parity into "even_ranks" / "odd_ranks". Each rank logs every communicator (name, size,
 * local rank, world ranks), posts one MPI_Irecv on its split communicator from the next
 * local rank (tag 31) and one on "dup_world" from world rank 0 (tag 32, rank 0 skips it),
 * then holds until SIGUSR1; after it the matching sends complete everything. */
#include "mpi_example_log.h"

static void log_comm(MPI_Comm comm) {
    int size = 0, lrank = 0;
    MPI_Group group, world_group;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &lrank);
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    char ranks[512] = "";
    int len = 0;
    for (int i = 0; i < size; ++i) {
        int w = 0;
        MPI_Group_translate_ranks(group, 1, &i, world_group, &w);
        len += snprintf(ranks + len, sizeof ranks - (size_t)len, "%s%d", i ? "," : "", w);
    }
    mpi_log("comm=%s size=%d local_rank=%d world_ranks=%s", comm_name(comm), size, lrank, ranks);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
}

int main(int argc, char** argv) {
    int rank = 0, size = 0;
    static int a[3], b[3], sa[3], sb[3];
    MPI_Comm dup, split;
    MPI_Request req[4];
    int nreq = 0;
    block_sigusr1();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    log_rank = rank;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "dup_world");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Comm_set_name(split, rank % 2 == 0 ? "even_ranks" : "odd_ranks");
    log_comm(MPI_COMM_WORLD);
    log_comm(dup);
    log_comm(split);
    int lrank = 0, lsize = 0;
    MPI_Comm_rank(split, &lrank);
    MPI_Comm_size(split, &lsize);
    int next = (lrank + 1) % lsize, prev = (lrank + lsize - 1) % lsize;
    log_op("irecv", next, 31, 3, MPI_INT, a, split);
    MPI_Irecv(a, 3, MPI_INT, next, 31, split, &req[nreq++]);
    if (rank != 0) {
        log_op("irecv", 0, 32, 3, MPI_INT, b, dup);
        MPI_Irecv(b, 3, MPI_INT, 0, 32, dup, &req[nreq++]);
    }
    hold_until_sigusr1();
    MPI_Isend(sa, 3, MPI_INT, prev, 31, split, &req[nreq++]);
    if (rank == 0) {
        for (int r = 1; r < size; ++r) {
            MPI_Send(sb, 3, MPI_INT, r, 32, dup);
        }
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    mpi_log("state=done");
    MPI_Finalize();
    return 0;
}
