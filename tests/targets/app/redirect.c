/* `run ARGS < IN > OUT 2> ERR`: counts the lines of its stdin, prints its arguments on
 * stdout and one line on stderr, so that a test sees where each stream went. */
#include <stdio.h>

int main(int argc, char** argv) {
    char line[256];
    int lines = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        lines++;
    }
    printf("argc=%d lines=%d\n", argc, lines);
    for (int i = 1; i < argc; i++) {
        printf("arg %s\n", argv[i]);
    }
    fflush(stdout);
    fprintf(stderr, "to-stderr\n");
    return 0;
}
