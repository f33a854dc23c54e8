#pragma once
// A condition's bytecode (agent_abi.h) compiled to x86-64 code that a jump pad runs before
// it saves the registers and calls the agent (issue 21; gdbserver compiles agent
// expressions for its fast tracepoints the same way). The code reads the registers where
// they are and the frame and globals directly, and decides only what it can decide as the
// agent's interpreter would: a false condition goes straight to the relocated instructions
// (a pass costs a few instructions and writes no memory but the stack); a true one, or one
// it cannot decide (a division by zero, a shift of 64 or more), goes on into the pad's full
// path, where the agent evaluates it again and acts (stops, ignores, counts, prints). The
// interpreter stays the reference: a program with anything the native code does not do
// (LOAD through process_vm_readv, the flags register, backward jumps) is not compiled.
//
// The code runs with %rsp 128 bytes below the site's (the red zone kept), saves %rax, the
// arithmetic flags (lahf/seto: pushfq/popfq cost more), %rcx and %rdx, and restores them
// exactly on both exits. A pad of a counter also counts there (native_count).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ompdbg::tracer::internal {

struct native_filter {
    /// Starts right after the pad's `lea -128(%rsp),%rsp`; ends falling through into the
    /// pad's full path (the next byte is its pushfq), with every register as at the site.
    std::vector<std::byte> code;
    /// Offset in `code` of the rel32 of the jump to the relocated instructions (the false
    /// exit, %rsp at the site's again), which the pad's builder resolves.
    std::size_t to_relocated = 0;
    /// The direct form (native_direct.hpp): comparisons branched on, no bytecode stack.
    bool direct = false;
};

/// A record whose hits are only counted (OMPDBG_ACTION_COUNT): when its condition holds the
/// native code counts the hit itself, as the agent's count_passed does, in the thread's own
/// shard, and goes on to the relocated instructions; it leaves the hit to the agent when
/// the process is a fork child, the record is disabled, hits are left to ignore, or the
/// thread has no shard of its own yet (or shares shard 0).
struct native_count {
    std::uint64_t control = 0;   ///< ompdbg_agent_control in the process
    std::uint32_t index = 0;     ///< the record's
};

/// The native form of `bytecode` for a site at `site` (REG 16, rip, is the site); nullopt
/// when the program uses what only the interpreter does, or is malformed (the interpreter
/// then answers "undecided" and the debugger decides, as without a filter). `bytecode` may
/// be empty (no condition) when `count` is given. `flags_dead`: the arithmetic flags are
/// dead at the site (flags_dead_at in native_direct.hpp), so that a false condition may
/// leave them changed; a true one always gives them back.
std::optional<native_filter> compile_native_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                   std::optional<native_count> count = std::nullopt,
                                                   bool flags_dead = false);

/// compile_native_filter without the direct form: the bytecode's stack on the machine
/// stack, for any program the interpreter runs but LOAD, the flags and backward jumps.
std::optional<native_filter> compile_stack_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                  std::optional<native_count> count = std::nullopt);

}  // namespace ompdbg::tracer::internal
