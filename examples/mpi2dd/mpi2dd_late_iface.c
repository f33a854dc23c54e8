/* The MPI2DD symbols of mpi2dd-late (mpi2dd_late_flags.c), in a file of their own so that
 * they can live in the program (mpi2dd-late) or in a shared library it links
 * (libmpi2dd_late.so, for mpi2dd-late-lib), as an MPI library would hold them.
 *
 * MPI2DD_info is deliberately not initialised: it is in .bss, all zero in the file, and
 * the starter fills it in main(). Only the debugger writes debugger_flags, before the
 * starter runs. */
#include "ompdbg/tracer/mpi2dd.h"

struct MPI2DD_INFO MPI2DD_info;

__attribute__((noinline)) void MPI2DD_breakpoint(void) {
    __asm__ volatile("" ::: "memory");
}
