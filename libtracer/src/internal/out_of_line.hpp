#pragma once
// Stepping over a breakpoint without a second stop (gdb's displaced stepping, without its
// final single-step): the instruction under the int3 is either copied to a slot of a
// scratch page in the target, followed by an absolute jump back, or emulated when it
// cannot run anywhere else (call/jmp rel32). Slots are written once and never change while
// the process lives, so any number of threads may run through the same slot at once.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ompdbg::tracer::internal {

/// Bytes of one slot: the longest x86 instruction (15) + `jmp *0(%rip)` (6) + its
/// 8-byte target, rounded up.
inline constexpr std::size_t ool_slot_size = 32;

/// How a thread standing on a breakpoint gets over the instruction the int3 replaced.
struct ool_plan {
    enum class kind {
        execute,       ///< jump to the slot holding `code` (relocated insn + jmp back)
        call,          ///< emulate `call rel32`: push addr+length, pc = target
        jump,          ///< emulate `jmp rel8/rel32`: pc = target
        conditional,   ///< emulate `jcc rel8/rel32`: pc = target when `condition` holds
                       ///< on the thread's EFLAGS, else the next instruction
        single_step,   ///< cannot be moved (loop/jrcxz, indirect call, int3...): step in place
    };
    kind how = kind::single_step;
    std::size_t length = 0;
    std::uint64_t target = 0;       ///< call/jump/conditional destination
    unsigned condition = 0;         ///< conditional: the jcc's condition code (opcode & 0xf)
    std::vector<std::byte> code;    ///< execute: the slot's bytes
    bool rip_relative = false;      ///< execute: the slot must be within rel32 of addr
};

/// Decodes the instruction at `addr` from its original `bytes` (up to 15; the int3 already
/// replaced by the saved byte) and plans its execution from `slot` (the address the
/// instruction will run at for `execute`). rip-relative operands are re-targeted; when the
/// displacement no longer fits 32 bits the plan is `single_step`.
ool_plan plan_out_of_line(std::span<const std::byte> bytes, std::uint64_t addr, std::uint64_t slot);

/// Whether the x86 condition code `cc` (0 = o, 1 = no, 2 = b, ... 15 = g: the low nibble of
/// a jcc opcode) holds for `eflags`.
bool condition_holds(unsigned cc, std::uint64_t eflags);

}  // namespace ompdbg::tracer::internal
