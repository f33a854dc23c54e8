#pragma once
// The code of one jump pad (issue 21; gdb's fast tracepoint pads are the model): what a
// thread runs instead of the instructions a `jmp rel32` at the site displaced.
//
//   lea -128(%rsp),%rsp;
//   [the condition in native code (native_filter.hpp): false → the relocated instructions]
//   pushfq; push site; push r15..r8, rsp, rbp, rdi, rsi, rbx, rcx,
//   rdx, rax              — the register block of agent_abi.h (rsp fixed up to the site's)
//   call *evaluate(record, block) with the stack aligned
//   false: restore everything; the relocated instructions; jmp *back  (site + covered)
//   true:  restore everything; jmp *stop_slot → int3 (the debugger reports the site)
//
// The stop path jumps through a slot so that a pad can be disarmed while threads are
// inside it: the slot then points at the relocated instructions and a thread that already
// decided to stop goes on instead (the pad's memory is never freed).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "internal/instruction_relocation.hpp"
#include "internal/native_filter.hpp"

namespace ompdbg::tracer::internal {

/// Room for one pad in a pad page (pads never straddle pages).
inline constexpr std::size_t jump_pad_size = 512;

struct jump_pad {
    std::vector<std::byte> code;     ///< to write at `base`
    std::uint64_t base = 0;
    std::uint64_t site = 0;
    std::uint64_t trap = 0;          ///< the int3 of the stop path
    std::uint64_t relocated = 0;     ///< the relocated instructions
    std::uint64_t stop_slot = 0;     ///< 8 bytes: where the stop path jumps
    std::uint64_t after_call = 0;    ///< the return address of the call of the agent
    std::uint64_t evaluate = 0;      ///< the agent's function the pad calls
    bool native_condition = false;   ///< the pad evaluates the condition (or counts) itself first
    relocated_code moved;
    /// The 5 bytes written at the site: jmp rel32 to `base`.
    std::vector<std::byte> site_jump;
};

struct jump_pad_plan {
    std::optional<jump_pad> pad;
    std::string refusal;
};

/// Builds the pad for `site` at `base` from the original code at the site (`bytes`, int3s
/// of other sites hidden), calling `evaluate(record, block)`. Refused when the displaced
/// instructions cannot move or the pad is out of rel32 reach of the site. `function_end`
/// (0: unknown) lets a final `ret` before alignment padding move (relocate_instructions).
/// `condition` (the record's condition bytecode; empty: none) is compiled into the pad when
/// it can be (native_filter.hpp), so that a false condition does not call the agent; with
/// `count` the pad also counts a hit whose condition holds itself.
jump_pad_plan build_jump_pad(std::span<const std::byte> bytes, std::uint64_t site, std::uint64_t base,
                             std::uint64_t record, std::uint64_t evaluate, std::uint64_t function_end = 0,
                             std::span<const std::uint8_t> condition = {},
                             std::optional<native_count> count = std::nullopt);

}  // namespace ompdbg::tracer::internal
