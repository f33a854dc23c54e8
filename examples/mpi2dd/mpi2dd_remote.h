/* Ranks of mpi2dd-run on other hosts (issue 18): with `--host HOST:N` the starter runs N
 * ranks on HOST through a remote shell (`--rsh CMD`, else $MPI2DD_RSH, else `ssh -T`), as
 * mpirun's rsh launcher does, and names HOST and the rank's pid there in its proctable.
 * Only the first comm world's ranks of a flat job (no --dirs) go to other hosts. */
#ifndef MPI2DD_REMOTE_H
#define MPI2DD_REMOTE_H

#include <sys/types.h>

/* Takes `--host HOST:N` or `--rsh CMD` at argv[*i] (advancing *i past its value): returns
 * 1 when it was one of them, 0 otherwise; dies on a malformed value. */
int mpi2dd_remote_option(int argc, char** argv, int* i);
/* How many ranks the --host options place on other hosts. */
int mpi2dd_remote_count(void);
/* The host that rank `rank` of a job of `size` ranks runs on, or NULL for this host: the
 * first ranks run here, the last ones on the --host hosts in the order given. */
const char* mpi2dd_remote_host(int rank, int size);
/* Starts one rank on `host` with the environment mpi2dd_init() reads; its requests reach
 * `ctl_fd` (the remote shell's stdout, relayed), its output this starter's stdout. Returns
 * the pid of the remote shell here (the rank's stand-in among this starter's children)
 * and stores the rank's pid on its host in *host_pid (0 when the host did not say). */
pid_t mpi2dd_remote_start(const char* host, const char* exe, char* const* args, int rank, int size,
                          const char* world, int debugged, int ctl_fd, pid_t* host_pid);

#endif
