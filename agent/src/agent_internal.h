#ifndef OMPDBG_AGENT_INTERNAL_H
#define OMPDBG_AGENT_INTERNAL_H
/* What the agent's files share (agent.c: the control block, the bytecode, the evaluator;
 * agent_print.c: dprintf lines). Hidden: only the ABI's symbols are exported. */

#include "ompdbg/agent/agent_abi.h"

#include <stdint.h>

#define AGENT_EXPORT __attribute__((visibility("default")))

/* Runs `code`: 0 and its value in *value, or -1 when it cannot be decided here. */
int ompdbg_agent_exec(const uint8_t* code, uint32_t len, const uint64_t* regs, uint64_t* value);
/* Reads `size` bytes at `addr` of this process through process_vm_readv; 0 when it cannot. */
int ompdbg_agent_read(void* dst, uint64_t addr, unsigned size);
/* Formats the line of dprintf site `site` into the ring; 0 when the debugger must print it
 * (the thread stops). */
int ompdbg_agent_print(const struct ompdbg_agent_site* site, const uint64_t* regs);

#endif
