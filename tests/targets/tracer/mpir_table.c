/* An MPI starter's MPIR_proctable filled as srun fills it (the tracer's MPIR tests): every
 * task's host and pid first, as each launch answer comes, then the executable names once
 * the last task has answered (srun's mpir_set_executable_names). names_pending() and
 * names_set() mark the two moments. */
#include <stddef.h>

struct MPIR_PROCDESC {
    char* host_name;
    char* executable_name;
    int pid;
};

struct MPIR_PROCDESC* MPIR_proctable = NULL;
int MPIR_proctable_size = 0;
volatile int MPIR_being_debugged = 0;
volatile int MPIR_debug_state = 0;

void MPIR_Breakpoint(void) { __asm__ volatile(""); }
__attribute__((noinline)) void names_pending(void) { __asm__ volatile(""); }
__attribute__((noinline)) void names_set(void) { __asm__ volatile(""); }

static struct MPIR_PROCDESC table[3];

int main(void) {
    MPIR_proctable = table;
    MPIR_proctable_size = 3;
    for (int i = 0; i < 3; ++i) {
        table[i].host_name = "node";
        table[i].pid = 1000 + i;
    }
    names_pending();
    for (int i = 0; i < 3; ++i) {
        table[i].executable_name = "/bin/true";
    }
    names_set();
    MPIR_debug_state = 1;
    MPIR_Breakpoint();
    return 0;
}
