#pragma once
/// What the code of an outlined OpenMP routine does with its local variables, for the
/// scoping `info locals` shows (issue 5). The compilers' names do not tell a reduction copy
/// from a private one (clang names both after the user's variable; gcc too, and gives a
/// firstprivate copy the same name), but their unoptimised code does, in three shapes:
///   - a reduction copy is handed to the runtime's reduction entry (clang:
///     `lea COPY(%rbp)` into the reduction list before `call __kmpc_reduce_nowait`, read
///     after it) or read between a call to the combining section's entry and the next call
///     (gcc: GOMP_atomic_start), or combined with a lock-prefixed instruction on the
///     construct's own line (gcc: `lock add COPY, field(.omp_data_i)`);
///   - a copy is initialised from memory reached through a parameter (clang: firstprivate
///     aggregates; gcc: firstprivate and read-only shared variables, alike);
///   - a copy's value is stored through a parameter (lastprivate).
/// Only -O0 frames are read this way: variables in frame slots addressed from %rbp.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ompdbg::debugger {

/// A local variable's frame slot: its address minus the frame's %rbp, and its size.
struct frame_slot {
    std::int64_t offset = 0;
    std::uint64_t size = 0;
};

/// Per local (in the order given): what the code does with it.
struct slot_facts {
    bool reduction = false;   ///< handed to the runtime's reduction code
    bool copied_in = false;   ///< initialised from memory reached through a parameter
    bool copied_out = false;  ///< its value stored through a parameter
};

struct outlined_code {
    std::span<const std::byte> bytes;   ///< the routine's code
    std::uint64_t address = 0;          ///< where `bytes` starts
    /// The function the call instruction that returns to the given address goes to
    /// (through a PLT stub or a GOT slot), "" when unknown; "foo@plt" and "foo" both name foo.
    std::function<std::string(std::uint64_t)> callee_name;
    /// True for an address on the construct's own line (code the compiler made for the
    /// clause, not the user's statements).
    std::function<bool(std::uint64_t)> on_construct_line;
    /// The runtime's entries that combine reduction copies (DMPL_ompdbg_reduction_routines).
    std::vector<std::string> reduction_routines;
};

/// Reads the routine once, linearly (the shapes above never span a branch at -O0).
/// Undecodable bytes end the walk; never throws for odd code, it only finds less.
std::vector<slot_facts> analyse_outlined_code(const outlined_code& code, const std::vector<frame_slot>& locals);

}  // namespace ompdbg::debugger
