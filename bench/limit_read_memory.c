/* The physical limit of workload 7: K times, read SIZE bytes at ADDR of process PID with
 * one process_vm_readv and write them to OUT (what `dump memory` does, with nothing else).
 *
 *   limit_read_memory PID ADDR_HEX SIZE K OUT   → prints "limit-per-op-us X" on stdout */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s PID ADDR_HEX SIZE K OUT\n", argv[0]);
        return 2;
    }
    pid_t pid = (pid_t)atoi(argv[1]);
    unsigned long addr = strtoul(argv[2], NULL, 16);
    size_t size = strtoul(argv[3], NULL, 10);
    int k = atoi(argv[4]);
    char* buf = malloc(size);
    if (!buf) {
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < k; ++i) {
        struct iovec local = {buf, size}, remote = {(void*)addr, size};
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n != (ssize_t)size) {
            perror("process_vm_readv");
            return 1;
        }
        int fd = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, size) != (ssize_t)size) {
            perror(argv[5]);
            return 1;
        }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / k;
    printf("limit-per-op-us %.1f\n", us);
    return 0;
}
