/* Small helpers the reference MPI2DD starter's files share (mpi2dd_run.c, mpi2dd_remote.c):
 * fatal errors and allocation that cannot fail quietly, and a program's absolute path. */
#ifndef MPI2DD_STARTER_UTIL_H
#define MPI2DD_STARTER_UTIL_H

#include <stddef.h>

/* "mpi2dd-run: MESSAGE" on stderr, then exit status 2. */
void die(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
char* xstrdup(const char* s);
void* xrealloc(void* p, size_t n);
/* `prog` as an absolute, resolved path (searched in PATH when it has no slash); dies when
 * there is no such program. */
char* absolute_program(const char* prog);

#endif
