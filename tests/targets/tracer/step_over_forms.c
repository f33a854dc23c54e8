/* One function per instruction form that the out-of-line step-over handles (the breakpoint
 * goes on the symbol NAME_site, the first instruction of each form): T threads (argv[2],
 * default 4) call each form R times (argv[1], default 3) after a barrier, so that several
 * threads hit a site at once. Every form returns x + 1; the program checks the sums itself
 * and prints "NAME ok" (or "NAME WRONG"), then the rip-relative counter. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

long counter;                  /* lock addq $1, counter(%rip) */
long table[64];                /* lea table(%rip) */
long (*helper_ptr)(long);      /* jmp *helper_ptr(%rip) */

__asm__(
    ".text\n"
    ".p2align 4\n"
    "form_helper: lea 1(%rdi), %rax\n ret\n"
    ".globl endbr64_site\n endbr64_site: endbr64\n lea 1(%rdi), %rax\n ret\n"
    ".globl push_rbp_site\n push_rbp_site: push %rbp\n mov %rsp, %rbp\n lea 1(%rdi), %rax\n pop %rbp\n ret\n"
    ".globl mov_rbp_entry\n mov_rbp_entry: push %rbp\n"
    ".globl mov_rbp_site\n mov_rbp_site: mov %rsp, %rbp\n lea 1(%rdi), %rax\n pop %rbp\n ret\n"
    ".globl sub_rsp_site\n sub_rsp_site: sub $24, %rsp\n lea 1(%rdi), %rax\n add $24, %rsp\n ret\n"
    ".globl rip_rmw_site\n rip_rmw_site: lock addq $1, counter(%rip)\n lea 1(%rdi), %rax\n ret\n"
    ".globl rip_lea_site\n rip_lea_site: lea table(%rip), %rax\n mov (%rax,%rdi,8), %rax\n ret\n"
    ".globl rip_load_site\n rip_load_site: mov helper_ptr(%rip), %rax\n jmp *%rax\n"
    ".globl rip_jmp_site\n rip_jmp_site: jmp *helper_ptr(%rip)\n"
    ".globl call_rel_site\n call_rel_site: call form_helper\n ret\n"
    ".globl jmp_rel_site\n jmp_rel_site: jmp form_helper\n"
    ".globl jcc_entry\n jcc_entry: cmp $0, %rdi\n"
    ".globl jcc_site\n jcc_site: jl 1f\n lea 1(%rdi), %rax\n ret\n1: xor %eax, %eax\n ret\n"
    /* jge rel32, always taken (x >= 0) */
    ".globl jcc_taken_entry\n jcc_taken_entry: cmp $0, %rdi\n"
    ".globl jcc_taken_site\n jcc_taken_site: {disp32} jge 1f\n xor %eax, %eax\n ret\n1: lea 1(%rdi), %rax\n ret\n"
    /* jbe (CF or ZF): taken in round 0 only, so that one site goes both ways */
    ".globl jcc_mixed_entry\n jcc_mixed_entry: cmp $0, %rdi\n"
    ".globl jcc_mixed_site\n jcc_mixed_site: jbe 1f\n lea 1(%rdi), %rax\n ret\n1: mov $1, %eax\n ret\n");

long form_helper(long);
long endbr64_site(long), push_rbp_site(long), mov_rbp_entry(long), sub_rsp_site(long), rip_rmw_site(long),
    rip_lea_site(long), rip_load_site(long), rip_jmp_site(long), call_rel_site(long), jmp_rel_site(long),
    jcc_entry(long), jcc_taken_entry(long), jcc_mixed_entry(long);

static const struct {
    const char* name;
    long (*fn)(long);
} forms[] = {
    {"endbr64", endbr64_site}, {"push_rbp", push_rbp_site}, {"mov_rbp", mov_rbp_entry},
    {"sub_rsp", sub_rsp_site}, {"rip_rmw", rip_rmw_site},   {"rip_lea", rip_lea_site},
    {"rip_load", rip_load_site}, {"rip_jmp", rip_jmp_site}, {"call_rel", call_rel_site},
    {"jmp_rel", jmp_rel_site},   {"jcc", jcc_entry},         {"jcc_taken", jcc_taken_entry},
    {"jcc_mixed", jcc_mixed_entry},
};
#define NFORMS (sizeof forms / sizeof forms[0])

static int rounds = 3;
static pthread_barrier_t barrier;
static long sums[NFORMS];

static void* worker(void* arg) {
    (void)arg;
    for (int r = 0; r < rounds; ++r) {
        pthread_barrier_wait(&barrier);
        for (unsigned i = 0; i < NFORMS; ++i) {
            __atomic_fetch_add(&sums[i], forms[i].fn(r), __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

int main(int argc, char** argv) {
    rounds = argc > 1 ? atoi(argv[1]) : 3;
    int nthreads = argc > 2 ? atoi(argv[2]) : 4;
    for (int i = 0; i < 64; ++i) {
        table[i] = i + 1;
    }
    helper_ptr = form_helper;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t th[64];
    for (int t = 0; t < nthreads; ++t) {
        pthread_create(&th[t], NULL, worker, NULL);
    }
    for (int t = 0; t < nthreads; ++t) {
        pthread_join(th[t], NULL);
    }
    long expected = 0;
    for (int r = 0; r < rounds; ++r) {
        expected += r + 1;
    }
    expected *= nthreads;
    for (unsigned i = 0; i < NFORMS; ++i) {
        printf("%s %s\n", forms[i].name, sums[i] == expected ? "ok" : "WRONG");
    }
    printf("counter=%ld\n", counter);
    return 0;
}
