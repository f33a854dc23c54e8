/* slurm_task: one task of a Slurm job step that is no MPI program; it reads its rank
 * from Slurm's environment and prints "task R of N pid P" first.
 *   srun -n N slurm_task [RANK CODE]   computes in task_work() (where the srun tests
 *                                      break), prints "task R sum S" and exits 0, except
 *                                      rank RANK, which exits with CODE (srun then exits
 *                                      with the largest exit code of its tasks)
 *   srun -n N slurm_task park          waits until a debugger sets `released`, then
 *                                      prints "task R released" and exits 0
 * Lines are printed unbuffered, whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int released = 0; /* set by a debugger (park) */

static int env_int(const char* name) {
    const char* v = getenv(name);
    return v ? atoi(v) : -1;
}

int task_work(int rank) {
    int sum = 0;
    for (int i = 0; i <= rank; ++i) {
        sum += i; /* LINE-MARK: work */
    }
    return sum;
}

static void park(void) {
    while (!released) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int rank = env_int("SLURM_PROCID");
    printf("task %d of %d pid %d\n", rank, env_int("SLURM_NTASKS"), (int)getpid());
    if (argc > 1 && strcmp(argv[1], "park") == 0) {
        park();
        printf("task %d released\n", rank);
        return 0;
    }
    int exit_rank = argc > 2 ? atoi(argv[1]) : -1;
    int code = argc > 2 ? atoi(argv[2]) : 0;
    printf("task %d sum %d\n", rank, task_work(rank));
    return rank == exit_rank ? code : 0;
}
