#ifndef OMPDBG_AGENT_ABI_H
#define OMPDBG_AGENT_ABI_H
/* The contract between ompdbg and its in-target agent (libompdbg_agent.so): the layout of
 * the control block the debugger finds by the symbol `ompdbg_agent_control`, the register
 * block a jump pad hands to `ompdbg_agent_evaluate`, and the condition bytecode.
 * Plain C, included by the agent and by the debugger; sizes are static-asserted on both
 * sides. Modelled on gdb's in-process agent and agent expressions (gdb/doc/agentexpr.texi). */

#include <stdint.h>

#define OMPDBG_AGENT_MAGIC 0x31746e6567616f64ull /* "doagent1" */
#define OMPDBG_AGENT_VERSION 6u
#define OMPDBG_AGENT_MAX_SITES 64u
#define OMPDBG_AGENT_CODE_BYTES 240u        /* one program: a condition, an argument */
#define OMPDBG_AGENT_SITE_CODE_BYTES 512u   /* a record's condition and arguments */
#define OMPDBG_AGENT_MAX_ARGS 8u
#define OMPDBG_AGENT_FORMAT_BYTES 160u
#define OMPDBG_AGENT_RING_LINES 4096u
#define OMPDBG_AGENT_LINE_BYTES 240u
#define OMPDBG_AGENT_STACK_DEPTH 32u
/* Counter shards: a thread counts in its own shard (its slot, taken once per thread), so
 * that threads on different cores never write the same cache line; the debugger sums them. */
#define OMPDBG_AGENT_SHARDS 64u

/* The register block a pad pushes: 17 slots indexed by x86-64 DWARF register number
 * (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip), rsp and
 * rip as they were at the site, then rflags. */
#define OMPDBG_AGENT_REGS 17u
#define OMPDBG_AGENT_REG_FLAGS 17u

/* Bytecode: a stack of 64-bit words; operands follow the opcode little-endian. */
enum ompdbg_agent_op {
    OMPDBG_OP_END = 0x00,     /* result = pop() != 0 */
    OMPDBG_OP_CONST = 0x01,   /* imm64: push */
    OMPDBG_OP_REG = 0x02,     /* u8 regno: push the register's value at the site */
    OMPDBG_OP_LOAD = 0x03,    /* u8 size (1,2,4,8): pop addr, push zero-extended bytes read
                                 through process_vm_readv (a bad address stops, never faults) */
    OMPDBG_OP_LOAD_FRAME = 0x06, /* u8 size: as LOAD, read directly: only for addresses the
                                 compiler knows are mapped (the site's frame, a global) */
    OMPDBG_OP_TP = 0x07,      /* push the thread pointer (fs_base): thread-locals of a
                                 module in the static TLS area are at a fixed offset from it */
    OMPDBG_OP_SEXT = 0x04,    /* u8 bits: sign-extend the top from `bits` */
    OMPDBG_OP_ZEXT = 0x05,    /* u8 bits: zero-extend the top from `bits` */
    OMPDBG_OP_ADD = 0x10,
    OMPDBG_OP_SUB = 0x11,
    OMPDBG_OP_MUL = 0x12,
    OMPDBG_OP_DIV_S = 0x13,   /* division by zero: stop (the debugger reports it) */
    OMPDBG_OP_DIV_U = 0x14,
    OMPDBG_OP_REM_S = 0x15,
    OMPDBG_OP_REM_U = 0x16,
    OMPDBG_OP_AND = 0x17,
    OMPDBG_OP_OR = 0x18,
    OMPDBG_OP_XOR = 0x19,
    OMPDBG_OP_SHL = 0x1a,
    OMPDBG_OP_SHR_S = 0x1b,
    OMPDBG_OP_SHR_U = 0x1c,
    OMPDBG_OP_NEG = 0x1d,
    OMPDBG_OP_NOT = 0x1e,     /* bitwise */
    OMPDBG_OP_LNOT = 0x1f,    /* logical: 1 when zero */
    OMPDBG_OP_EQ = 0x20,
    OMPDBG_OP_NE = 0x21,
    OMPDBG_OP_LT_S = 0x22,
    OMPDBG_OP_LT_U = 0x23,
    OMPDBG_OP_LE_S = 0x24,
    OMPDBG_OP_LE_U = 0x25,
    OMPDBG_OP_JZ = 0x30,      /* u16 target: pop, jump when zero */
    OMPDBG_OP_JMP = 0x31,     /* u16 target */
    OMPDBG_OP_DUP = 0x32,
    OMPDBG_OP_POP = 0x33,
    OMPDBG_OP_SWAP = 0x34
};

/* What a site does when its condition holds (a site without a condition has the
 * condition `1`): hits to ignore come first, then the action. */
enum ompdbg_agent_action {
    OMPDBG_ACTION_STOP = 0,   /* stop for the debugger */
    OMPDBG_ACTION_COUNT = 1,  /* only count (commands `silent` + `continue`): never stop */
    OMPDBG_ACTION_PRINT = 2   /* dprintf: format the line into the ring; stop only when the
                                 line cannot be made here or the ring is full */
};

/* One site's record. The debugger fills `code`, `action`, `ignore` and then sets
 * `enabled`; it writes `ignore` again only with every thread stopped. Every pass through the
 * pad reads the record: nothing in it is written by the program's threads but `ignore`,
 * which the agent decrements once for each hit it ignores (on a cache line of its own). Hits
 * the agent handles without a stop (condition true, then ignored, counted or printed) are
 * counted in the control block's `passed` shards. */
struct ompdbg_agent_site {
    uint32_t in_use;     /* allocated by the debugger */
    uint32_t enabled;    /* 0: the pad is inert, the evaluator answers false */
    uint32_t code_len;
    uint32_t action;     /* enum ompdbg_agent_action */
    /* OMPDBG_ACTION_PRINT: `format` is the line with conversions the agent makes exactly
     * as the debugger's printf (C's) would: '%', flags among "-+ #0", a width, a '.' and a
     * precision (each at most OMPDBG_AGENT_LINE_BYTES), the operand's size ('L' 64 bits:
     * %ld %lu %lld %lx..., 'h' 16 bits: %hd..., else 32), then d u o x X (integers), c, s
     * (a C string read through process_vm_readv; NULL is "(null)"), p (as %#lx, or "(nil)");
     * %% is '%'. No floating point: the agent uses no vector registers. Argument i is the
     * program code[arg_at[i], arg_at[i] + arg_len[i]). */
    uint32_t nargs;
    uint32_t format_len;
    uint16_t arg_at[OMPDBG_AGENT_MAX_ARGS];
    uint16_t arg_len[OMPDBG_AGENT_MAX_ARGS];
    char format[OMPDBG_AGENT_FORMAT_BYTES];
    uint8_t code[OMPDBG_AGENT_SITE_CODE_BYTES];   /* the condition: [0, code_len) */
    /* Hits left to ignore; alone on its cache line (the records are 64-byte aligned). */
    uint64_t ignore __attribute__((aligned(64)));
    uint8_t ignore_line[56];
};

/* One line of the ring: published when `seq` is its position + 1. */
struct ompdbg_agent_line {
    uint64_t seq;
    uint32_t len;
    uint32_t reserved;
    char text[OMPDBG_AGENT_LINE_BYTES];
};

/* The dprintf lines (symbol `ompdbg_agent_ring`): the program's threads reserve a line by
 * a compare-and-swap on `head` while head - tail < OMPDBG_AGENT_RING_LINES, fill it, and
 * publish it through its `seq`; the debugger alone reads them and advances `tail`. */
struct ompdbg_agent_ring {
    uint64_t head;
    uint64_t tail;
    uint64_t full;       /* lines that found the ring full (they stopped instead) */
    uint64_t reserved;
    struct ompdbg_agent_line lines[OMPDBG_AGENT_RING_LINES];
};

/* One shard of the counters: `passed[i]` counts the hits of site i that the agent handled
 * without a stop, in the threads whose slot is this shard. */
struct ompdbg_agent_shard {
    uint64_t passed[OMPDBG_AGENT_MAX_SITES];
};

struct ompdbg_agent_control {
    uint64_t magic;
    uint32_t version;
    uint32_t max_sites;
    /* Set by the agent in a fork child (pthread_atfork): that copy of the program is not
     * debugged, every evaluation answers false. The debugger clears it in a child it
     * follows before it installs pads there. */
    uint32_t forked;
    /* Set by the debugger: at exit (the agent's destructor) call ompdbg_agent_sync(), where
     * the debugger has a breakpoint, so that it reads the counters one last time. */
    uint32_t sync_at_exit;
    uint32_t shards;     /* OMPDBG_AGENT_SHARDS */
    uint32_t reserved;
    /* Set by the agent when it starts: where a thread's shard number + 1 (0: none yet, 1:
     * the shared shard 0) is, from its thread pointer (%fs:shard_tls; initial-exec TLS, the
     * same in every thread). A pad that only counts reads it to count a hit itself. */
    int64_t shard_tls;
    struct ompdbg_agent_site sites[OMPDBG_AGENT_MAX_SITES] __attribute__((aligned(64)));
    /* Written by every pass that counts, each thread in its own shard (slot 0 is shared
     * by the threads beyond the others and counts atomically). */
    struct ompdbg_agent_shard shard[OMPDBG_AGENT_SHARDS] __attribute__((aligned(64)));
};

#ifdef __cplusplus
#define OMPDBG_AGENT_STATIC_ASSERT static_assert
#else
#define OMPDBG_AGENT_STATIC_ASSERT _Static_assert
#endif
OMPDBG_AGENT_STATIC_ASSERT(sizeof(struct ompdbg_agent_site) == 832 && __builtin_offsetof(struct ompdbg_agent_site, ignore) == 768,
                           "agent site layout");
OMPDBG_AGENT_STATIC_ASSERT(sizeof(struct ompdbg_agent_line) == 256, "agent line layout");
OMPDBG_AGENT_STATIC_ASSERT(__builtin_offsetof(struct ompdbg_agent_control, sites) == 64 &&
                               __builtin_offsetof(struct ompdbg_agent_control, shard) == 64 + 832 * OMPDBG_AGENT_MAX_SITES &&
                               sizeof(struct ompdbg_agent_control) ==
                                   64 + 832 * OMPDBG_AGENT_MAX_SITES + 8 * OMPDBG_AGENT_MAX_SITES * OMPDBG_AGENT_SHARDS,
                           "agent control layout");

#endif
