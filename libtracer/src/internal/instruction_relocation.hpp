#pragma once
// Moving the instructions a jump pad's `jmp rel32` displaces (jump_pad.cpp): they are
// copied into the pad, rip-relative displacements re-targeted and short or near jumps
// rewritten as rel32 ones, so that they do from the pad exactly what they did in place.
// What cannot move (calls: the return address would be in the pad; returns but one ending
// the function before padding, loop/jrcxz,
// indirect jumps, int/syscall, an int3 of another site) is refused with a reason.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ompdbg::tracer::internal {

/// Instructions relocated from `addr` to `dest`.
struct relocated_code {
    std::vector<std::byte> code;    ///< the moved instructions, no jump back
    std::size_t covered = 0;        ///< original bytes they replace (>= the minimum asked)
    /// (offset in the original, offset in `code`) of every moved instruction's start.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> starts;
    /// The original offset that corresponds to relocated offset `r` (an instruction start),
    /// nullopt when `r` is not one; and the reverse.
    std::optional<std::uint32_t> original_offset(std::uint32_t r) const;
    std::optional<std::uint32_t> relocated_offset(std::uint32_t o) const;
};

struct relocation {
    std::optional<relocated_code> moved;
    std::string refusal;   ///< why not, when `moved` is empty
};

/// Relocates whole instructions of `bytes` (the original code at `addr`, int3s of other
/// sites already replaced by the bytes they hide) to run at `dest`, until at least
/// `min_length` bytes are covered. A `ret` that ends the function (`function_end`, when
/// known: `bytes` then go on past it) moves too when only alignment padding (nops, int3)
/// follows it up to `min_length`: the padding belongs to no function, so nothing runs or
/// branches there, and the jump may cover it (the OpenMP runtime's ompd_bp_* functions are
/// a lone `ret`). The relocated code then ends in that `ret`.
relocation relocate_instructions(std::span<const std::byte> bytes, std::uint64_t addr, std::uint64_t dest,
                                 std::size_t min_length, std::uint64_t function_end = 0);

/// Decodes the function `code` (at `start`) from its first byte and names the first
/// direct branch whose target lies in (lo, hi), or an indirect jump (a jump table may go
/// anywhere): a reason, nullopt when none. Code that does not decode is a reason too.
std::optional<std::string> branch_into(std::span<const std::byte> code, std::uint64_t start, std::uint64_t lo,
                                       std::uint64_t hi);

}  // namespace ompdbg::tracer::internal
