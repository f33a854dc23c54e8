/* Raises SIGUSR1 (handled: prints "usr1") then dereferences a null pointer. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void on_usr1(int sig) {
    (void)sig;
    write(1, "usr1\n", 5);
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    volatile int* p = 0;
    return *p;
}
