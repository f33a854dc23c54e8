/* Names a message-queue DLL through MPIR_dll_name without being an MPI program: the path
 * is argv[1]. The plugin-policy tests point it at a copy of Open MPI's DLL in a directory
 * the policy does not trust, then allow that directory (`set plugin-path`, `--plugin-path`). */
#include <stdio.h>

char MPIR_dll_name[4096];

void dll_named(void) {
    printf("MPIR_dll_name=%s\n", MPIR_dll_name); /* LINE-MARK: dll_named */
    fflush(stdout);
}

int main(int argc, char** argv) {
    if (argc > 1) {
        snprintf(MPIR_dll_name, sizeof MPIR_dll_name, "%s", argv[1]);
    }
    dll_named();
    return 0;
}
