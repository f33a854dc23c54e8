#pragma once
// Emulation of the plain x86-64 moves that touch memory (mov/movzx/movsx between a
// register or an immediate and memory), for software watchpoints: a fault on a guarded
// page is then answered with one memory access through /proc/PID/mem and a new rip,
// instead of lifting the guard, single-stepping and guarding again (one ptrace stop
// instead of four). Anything else (flags, locks, string instructions) is not emulated.

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ompdbg::tracer::internal {

/// One decoded move.
struct emulated_move {
    std::size_t length = 0;        ///< instruction length in bytes
    std::uint64_t address = 0;     ///< effective address of the memory operand
    std::size_t size = 0;          ///< bytes accessed in memory (1, 2, 4, 8)
    bool is_store = false;         ///< memory is written (else read into a register)
    std::uint64_t value = 0;       ///< store: the value written (low `size` bytes)
    int reg = -1;                  ///< load: destination register (0 rax .. 15 r15)
    std::size_t reg_size = 0;      ///< load: destination width written (1, 2, 4, 8)
    bool sign_extend = false;      ///< load: movsx (else movzx / plain mov)
};

/// Decodes the instruction `code` (up to 15 bytes at regs.rip); nullopt when it is not one
/// of the moves emulated.
std::optional<emulated_move> decode_move(std::span<const std::byte> code, const user_regs_struct& regs);

/// Completes a load: the register `m.reg` of `regs` receives `loaded` (the `m.size`
/// bytes read) as x86-64 does (32-bit destinations clear the upper half, 8/16-bit ones keep
/// it); rip moves past the instruction.
void apply_load(const emulated_move& m, std::uint64_t loaded, user_regs_struct& regs);

}  // namespace ompdbg::tracer::internal
