/* Calls into the C library for `step` (libc6-dbg gives it line information): gdb enters
 * such a function through its PLT stub, and through the dynamic linker's lazy-binding
 * resolver on a first call; strlen and memcpy are ifuncs, entered in the implementation
 * chosen for this CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *word = argc > 5 ? argv[0] : "hello";
    size_t n = strlen(word);                  /* LINE-MARK: step_strlen */
    char *copy = malloc(n + 1);               /* LINE-MARK: step_malloc */
    memcpy(copy, word, n + 1);
    int pid = getpid();                       /* LINE-MARK: step_getpid */
    printf("%zu %s %d\n", n, copy, pid > 0);
    free(copy);                               /* LINE-MARK: step_free */
    return 0;
}
