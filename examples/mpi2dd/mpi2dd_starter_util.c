/* Helpers of the reference MPI2DD starter (mpi2dd_starter_util.h). */
#define _GNU_SOURCE
#include "mpi2dd_starter_util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpi2dd-run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

char* xstrdup(const char* s) {
    char* d = strdup(s);
    if (!d) {
        die("out of memory");
    }
    return d;
}

void* xrealloc(void* p, size_t n) {
    void* q = realloc(p, n);
    if (!q) {
        die("out of memory");
    }
    return q;
}

char* absolute_program(const char* prog) {
    char buf[PATH_MAX];
    if (strchr(prog, '/')) {
        if (!realpath(prog, buf)) {
            die("%s: %s", prog, strerror(errno));
        }
        return xstrdup(buf);
    }
    const char* path = getenv("PATH");
    char* copy = xstrdup(path ? path : "/usr/bin:/bin");
    for (char* dir = strtok(copy, ":"); dir; dir = strtok(NULL, ":")) {
        snprintf(buf, sizeof buf, "%s/%s", dir, prog);
        if (access(buf, X_OK) == 0) {
            char real[PATH_MAX];
            free(copy);
            return xstrdup(realpath(buf, real) ? real : buf);
        }
    }
    die("%s: command not found", prog);
    return NULL;
}
