#pragma once
// The direct form of a native condition (native_direct.cpp): a condition made of
// comparisons of registers, constants and frame, global or thread-local slots, joined by
// &&, || and ! (what agent_expr.cpp emits for `i == 999999`, `n > 3 && p != 0`), compiled
// to compare-and-branch code with no bytecode stack. The stack compiler of
// native_filter.cpp does everything else.

#include "internal/native_filter.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ompdbg::tracer::internal {

/// The direct form of `bytecode` at `site` (same contract as compile_native_filter without
/// a count); nullopt when the bytecode is of another shape. `flags_dead`: the arithmetic
/// flags are dead at the site (flags_dead_at), so a false condition may leave them changed.
std::optional<native_filter> compile_direct_filter(std::span<const std::uint8_t> bytecode, std::uint64_t site,
                                                   bool flags_dead);

/// Whether the arithmetic flags (OF SF ZF AF PF CF) are dead at `site`, whose code is
/// `code` (flags_liveness.cpp): straight-line code from there writes all six before reading
/// any of them, with no branch, call or instruction the scan does not know on the way.
/// False when unsure.
bool flags_dead_at(std::span<const std::byte> code, std::uint64_t site);

}  // namespace ompdbg::tracer::internal
