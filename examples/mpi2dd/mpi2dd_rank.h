/* The rank side of the reference MPI2DD implementation: a tiny "MPI library" that rank
 * programs link (mpi2dd_rank.c). It defines the rank's own MPI2DD_info and, when its
 * starter (mpi2dd-run) is being debugged, holds the rank in mpi2dd_init() until the
 * debugger sets MPI2DD_FLAG_GATE. Requests that need the starter (spawn, abort,
 * connect/accept/join) go to it over the control pipe it passed in MPI2DD_CTL_FD. */
#ifndef MPI2DD_RANK_H
#define MPI2DD_RANK_H

/* MPI_Init: reads the job from the environment, waits at the gate when debugged. Returns
 * 0, or -1 when the process was not started by mpi2dd-run. */
int mpi2dd_init(void);
int mpi2dd_rank(void);
int mpi2dd_size(void);
/* This process's comm-world id ("JOB/world0", ...). */
const char* mpi2dd_world(void);
/* For a spawned process: its parent's comm world and rank and the spawn's sequence;
 * NULL / -1 otherwise. */
const char* mpi2dd_parent_world(void);
int mpi2dd_parent_rank(void);
int mpi2dd_spawn_sequence(void);

/* MPI_Comm_spawn: asks the starter for `n` new processes running `prog` with `args`
 * (NULL-terminated, may be NULL) in a new comm world whose parent is this rank. */
void mpi2dd_spawn(const char* prog, int n, const char* const* args);
/* MPI_Abort: the starter shows `message` to the debugger and ends the job. Does not return. */
void mpi2dd_abort(const char* message) __attribute__((noreturn));
/* MPI_Comm_accept / MPI_Comm_connect / MPI_Comm_join through a port (a Unix socket path):
 * the two starters exchange their process tables. */
void mpi2dd_accept(const char* port);
void mpi2dd_connect(const char* port);
void mpi2dd_join(const char* port);

#endif
