#pragma once
// A condition's bytecode (agent_abi.h) as a tree of values and truth values, for the direct
// form of native conditions (native_direct.cpp): the bytecode's stack resolved at compile
// time (DUP, SWAP, POP and constant folding cost nothing at run time), the JZ/JMP diamonds
// of &&, || and ?: (as agent_expr.cpp writes them) as choices.

#include <cstdint>
#include <span>
#include <vector>

namespace ompdbg::tracer::internal {

enum class node_kind { constant, reg, address, mem, compare, lnot, ternary };

inline constexpr int absolute = -1;   ///< an address without a base register
inline constexpr int fs_base = -2;    ///< an address relative to the thread pointer

/// A value of the condition: a constant, a register or a memory slot (each read `width`
/// bits wide and extended as `is_signed` says), an address (base + displacement), or a
/// truth value (a comparison, its negation, a conditional choice).
struct node {
    node_kind kind = node_kind::constant;
    std::uint64_t value = 0;   ///< constant; address and mem: displacement
    int reg = absolute;        ///< reg: DWARF number; address and mem: base (DWARF number, absolute, fs_base)
    unsigned width = 64;
    bool is_signed = false;
    std::uint8_t op = 0;       ///< compare: OMPDBG_OP_EQ .. LE_U, operands a (below) and b
    int a = -1, b = -1, c = -1;
};

struct condition_tree {
    std::vector<node> nodes;
    int root = -1;   ///< -1: the bytecode is of another shape
};

/// The tree of `bytecode` for a site at `site` (REG 16, rip, is a constant): straight-line
/// code and diamonds, one END at the end, the interpreter's stack limit kept, no operation
/// but comparisons, !, loads of a base plus a constant, extensions, and constant arithmetic.
/// Anything else (root -1) is the stack compiler's.
condition_tree parse_condition_tree(std::span<const std::uint8_t> bytecode, std::uint64_t site);

}  // namespace ompdbg::tracer::internal
