#pragma once
/// Where a function's prologue pushed the caller's registers, read from its code (the
/// pushes gcc and clang emit: `endbr64`, `push %rbp`, `mov %rsp,%rbp`, `push %r15`...),
/// for `info frame`'s "Saved registers" where gdb reads the CFI.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/tracer/target.hpp"

namespace ompdbg::debugger {

/// The callee-saved registers pushed by the prologue at `entry` that ran before `pc`, each with its
/// slot (the first push at cfa-16, the next 8 below...), in push order. nullopt when the
/// code cannot be read.
std::optional<std::vector<std::pair<std::string, std::uint64_t>>> prologue_saves(tracer::target& tgt,
                                                                                 std::uint64_t entry,
                                                                                 std::uint64_t pc,
                                                                                 std::uint64_t cfa);

}  // namespace ompdbg::debugger
