/* libompdbg_agent.so: ompdbg's in-target agent (issue 21). Jump pads planted by the
 * debugger call ompdbg_agent_evaluate() with the registers of the thread at the site; it
 * runs the site's condition bytecode and answers whether the thread must stop for the
 * debugger. Built with -mgeneral-regs-only (a pad saves only the general registers and
 * flags) and without the C library in the hot path: no allocation, no locks, no errno;
 * memory the condition names is read through a raw process_vm_readv, so that a bad
 * pointer makes the thread stop (the debugger then reports the error) instead of faulting. */

#include "agent_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/uio.h>

AGENT_EXPORT struct ompdbg_agent_control ompdbg_agent_control = {
    .magic = OMPDBG_AGENT_MAGIC,
    .version = OMPDBG_AGENT_VERSION,
    .max_sites = OMPDBG_AGENT_MAX_SITES,
    .shards = OMPDBG_AGENT_SHARDS,
};

static long agent_pid;

/* The thread's counter shard + 1 (0: none taken yet). Initial-exec TLS: one %fs-relative
 * load, never a call of __tls_get_addr (which may allocate) inside a pad; the agent's 4
 * bytes fit the static TLS room glibc keeps for libraries loaded by dlopen. */
static __thread uint32_t thread_shard __attribute__((tls_model("initial-exec")));
static uint32_t next_shard = 1;

static long raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
    long ret;
    register long r10 __asm__("r10") = a3;
    register long r8 __asm__("r8") = a4;
    register long r9 __asm__("r9") = a5;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

int ompdbg_agent_read(void* dst, uint64_t addr, unsigned size) {
    struct iovec local = {dst, size};
    struct iovec remote = {(void*)(uintptr_t)addr, size};
    long n = raw_syscall6(SYS_process_vm_readv, agent_pid, (long)&local, 1, (long)&remote, 1, 0);
    return n == (long)size;
}

static void on_fork_child(void) {
    agent_pid = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
    __atomic_store_n(&ompdbg_agent_control.forked, 1u, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void agent_init(void) {
    agent_pid = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
    ompdbg_agent_control.shard_tls =
        (int64_t)((uintptr_t)&thread_shard - (uintptr_t)__builtin_thread_pointer());
    pthread_atfork(NULL, NULL, on_fork_child);
}

/* An operand of 8 or 2 bytes, little-endian (x86-64): one unaligned load, not a loop of
 * byte loads and shifts (the interpreter runs at every pass of a pad). */
static uint64_t operand(const uint8_t* code, uint32_t at, unsigned bytes) {
    if (bytes == 8) {
        uint64_t v;
        __builtin_memcpy(&v, code + at, 8);
        return v;
    }
    uint16_t v;
    __builtin_memcpy(&v, code + at, 2);
    return v;
}

static uint64_t extend(uint64_t v, unsigned bits, int is_signed) {
    if (bits == 0 || bits >= 64) {
        return v;
    }
    uint64_t mask = (1ull << bits) - 1;
    v &= mask;
    if (is_signed && (v >> (bits - 1)) & 1u) {
        v |= ~mask;
    }
    return v;
}

/* A bad pointer, a division by zero, malformed code: -1, and the debugger decides. */
int ompdbg_agent_exec(const uint8_t* code, uint32_t len, const uint64_t* regs, uint64_t* value) {
    uint64_t stack[OMPDBG_AGENT_STACK_DEPTH];
    unsigned sp = 0;
    uint32_t pc = 0;
    unsigned steps = 0;
#define NEED(n) do { if (sp < (n)) return -1; } while (0)
#define ROOM() do { if (sp >= OMPDBG_AGENT_STACK_DEPTH) return -1; } while (0)
#define ARGS(n) do { if (pc + (n) > len) return -1; } while (0)
    while (pc < len) {
        if (++steps > 4096) {
            return -1;
        }
        uint8_t op = code[pc++];
        uint64_t a, b;
        switch (op) {
        case OMPDBG_OP_END:
            NEED(1);
            *value = stack[sp - 1];
            return 0;
        case OMPDBG_OP_CONST:
            ARGS(8); ROOM();
            stack[sp++] = operand(code, pc, 8);
            pc += 8;
            break;
        case OMPDBG_OP_REG:
            ARGS(1); ROOM();
            if (code[pc] >= OMPDBG_AGENT_REGS + 1) {
                return -1;
            }
            stack[sp++] = regs[code[pc]];
            pc += 1;
            break;
        case OMPDBG_OP_LOAD: {
            ARGS(1); NEED(1);
            unsigned size = code[pc++];
            uint64_t v = 0;
            if ((size != 1 && size != 2 && size != 4 && size != 8) || !ompdbg_agent_read(&v, stack[sp - 1], size)) {
                return -1;
            }
            stack[sp - 1] = v;
            break;
        }
        case OMPDBG_OP_LOAD_FRAME: {
            ARGS(1); NEED(1);
            unsigned size = code[pc++];
            const void* p = (const void*)(uintptr_t)stack[sp - 1];
            if (size != 1 && size != 2 && size != 4 && size != 8) {
                return -1;
            }
            /* A slot need not be aligned (a packed struct's member): copied, not
               dereferenced as a wider type; x86-64 is little-endian, so the low bytes. */
            uint64_t v = 0;
            __builtin_memcpy(&v, p, size);
            stack[sp - 1] = v;
            break;
        }
        case OMPDBG_OP_TP:
            ROOM();
            stack[sp++] = (uint64_t)(uintptr_t)__builtin_thread_pointer();
            break;
        case OMPDBG_OP_SEXT:
        case OMPDBG_OP_ZEXT:
            ARGS(1); NEED(1);
            stack[sp - 1] = extend(stack[sp - 1], code[pc], op == OMPDBG_OP_SEXT);
            pc += 1;
            break;
        case OMPDBG_OP_NEG: NEED(1); stack[sp - 1] = 0 - stack[sp - 1]; break;
        case OMPDBG_OP_NOT: NEED(1); stack[sp - 1] = ~stack[sp - 1]; break;
        case OMPDBG_OP_LNOT: NEED(1); stack[sp - 1] = stack[sp - 1] == 0; break;
        case OMPDBG_OP_DUP: NEED(1); ROOM(); stack[sp] = stack[sp - 1]; ++sp; break;
        case OMPDBG_OP_POP: NEED(1); --sp; break;
        case OMPDBG_OP_SWAP:
            NEED(2);
            a = stack[sp - 1];
            stack[sp - 1] = stack[sp - 2];
            stack[sp - 2] = a;
            break;
        case OMPDBG_OP_JMP:
            ARGS(2);
            pc = (uint32_t)operand(code, pc, 2);
            break;
        case OMPDBG_OP_JZ:
            ARGS(2); NEED(1);
            a = stack[--sp];
            pc = a == 0 ? (uint32_t)operand(code, pc, 2) : pc + 2;
            break;
        default:
            NEED(2);
            a = stack[sp - 2];
            b = stack[sp - 1];
            --sp;
            switch (op) {
            case OMPDBG_OP_ADD: a = a + b; break;
            case OMPDBG_OP_SUB: a = a - b; break;
            case OMPDBG_OP_MUL: a = a * b; break;
            case OMPDBG_OP_DIV_S:
                if (b == 0 || ((int64_t)a == INT64_MIN && (int64_t)b == -1)) return -1;
                a = (uint64_t)((int64_t)a / (int64_t)b);
                break;
            case OMPDBG_OP_DIV_U: if (b == 0) return -1; a = a / b; break;
            case OMPDBG_OP_REM_S:
                if (b == 0 || ((int64_t)a == INT64_MIN && (int64_t)b == -1)) return -1;
                a = (uint64_t)((int64_t)a % (int64_t)b);
                break;
            case OMPDBG_OP_REM_U: if (b == 0) return -1; a = a % b; break;
            case OMPDBG_OP_AND: a = a & b; break;
            case OMPDBG_OP_OR: a = a | b; break;
            case OMPDBG_OP_XOR: a = a ^ b; break;
            case OMPDBG_OP_SHL: if (b >= 64) return -1; a = a << b; break;
            case OMPDBG_OP_SHR_S: if (b >= 64) return -1; a = (uint64_t)((int64_t)a >> b); break;
            case OMPDBG_OP_SHR_U: if (b >= 64) return -1; a = a >> b; break;
            case OMPDBG_OP_EQ: a = a == b; break;
            case OMPDBG_OP_NE: a = a != b; break;
            case OMPDBG_OP_LT_S: a = (int64_t)a < (int64_t)b; break;
            case OMPDBG_OP_LT_U: a = a < b; break;
            case OMPDBG_OP_LE_S: a = (int64_t)a <= (int64_t)b; break;
            case OMPDBG_OP_LE_U: a = a <= b; break;
            default: return -1;   /* unknown opcode: let the debugger decide */
            }
            stack[sp - 1] = a;
            break;
        }
    }
    return -1;
#undef NEED
#undef ROOM
#undef ARGS
}

/* Runs `code`; 1: stop (the condition holds, or cannot be decided here), 0: go on. */
AGENT_EXPORT int ompdbg_agent_run(const uint8_t* code, uint32_t len, const uint64_t* regs) {
    uint64_t value = 0;
    return ompdbg_agent_exec(code, len, regs, &value) != 0 || value != 0;
}

/* Takes one hit off the site's ignore count; 0 when nothing is left to ignore. Several
 * threads may race for the last one: exactly one wins it. */
static int take_ignored_hit(struct ompdbg_agent_site* site) {
    uint64_t left = __atomic_load_n(&site->ignore, __ATOMIC_RELAXED);
    while (left != 0) {
        if (__atomic_compare_exchange_n(&site->ignore, &left, left - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            return 1;
        }
    }
    return 0;
}


/* Counts a hit of record `index` handled without a stop. A thread owns its shard alone
 * (plain add, no locked instruction, no cache line shared with another thread) unless the
 * shards ran out: the threads after them share shard 0 and count atomically. Exact either
 * way; the debugger sums the shards. */
static void count_passed(uint32_t index) {
    uint32_t s = thread_shard;
    if (s == 0) {
        uint32_t n = __atomic_fetch_add(&next_shard, 1, __ATOMIC_RELAXED);
        s = (n < OMPDBG_AGENT_SHARDS ? n : 0) + 1;
        thread_shard = s;
    }
    uint64_t* c = &ompdbg_agent_control.shard[s - 1].passed[index];
    if (s == 1) {
        __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    }
}

/* Called by a jump pad with the site's record and the register block (see agent_abi.h).
 * Returns 1 when the thread must stop for the debugger. A hit the agent handles without a
 * stop (ignored, counted, printed into the ring) is counted in the `passed` shards, which
 * the debugger adds to the breakpoint's hit count; a stopping hit the debugger counts
 * itself. A false condition writes nothing. */
AGENT_EXPORT int ompdbg_agent_evaluate(struct ompdbg_agent_site* site, const uint64_t* regs) {
    if (__atomic_load_n(&ompdbg_agent_control.forked, __ATOMIC_RELAXED) != 0 ||
        __atomic_load_n(&site->enabled, __ATOMIC_ACQUIRE) == 0) {
        return 0;
    }
    uint64_t value = 0;
    int undecided = site->code_len > OMPDBG_AGENT_SITE_CODE_BYTES ||
                    ompdbg_agent_exec(site->code, site->code_len, regs, &value) != 0;
    if (!undecided && value == 0) {
        return 0;
    }
    /* A condition that cannot be decided here stops: the debugger decides (and counts, and
     * ignores) as without the agent. So does a record outside the control block. */
    uintptr_t index = ((uintptr_t)site - (uintptr_t)ompdbg_agent_control.sites) / sizeof(struct ompdbg_agent_site);
    if (!undecided && index < OMPDBG_AGENT_MAX_SITES &&
        (take_ignored_hit(site) || site->action == OMPDBG_ACTION_COUNT ||
         (site->action == OMPDBG_ACTION_PRINT && ompdbg_agent_print(site, regs)))) {
        count_passed((uint32_t)index);
        return 0;
    }
    return 1;
}

/* The debugger's breakpoint at exit (control.sync_at_exit): nothing to do here. */
AGENT_EXPORT __attribute__((noinline)) void ompdbg_agent_sync(void) {
    __asm__ volatile("" ::: "memory");
}

__attribute__((destructor)) static void agent_fini(void) {
    if (__atomic_load_n(&ompdbg_agent_control.sync_at_exit, __ATOMIC_ACQUIRE) != 0 &&
        __atomic_load_n(&ompdbg_agent_control.forked, __ATOMIC_RELAXED) == 0) {
        ompdbg_agent_sync();
    }
}
