// gdb's view of a scope's members: its own children plus what its abstract origin holds
// that no concrete child stands for (gdb's dwarf2/read.c inherit_abstract_dies).

#include "ompdbg/dwarf/scope_members.hpp"

#include "internal/die_util.hpp"

#include <dwarf.h>

#include <optional>
#include <set>
#include <vector>

namespace ompdbg::dwarf {

namespace {

/// Children of `die` in DWARF order.
std::vector<Dwarf_Die> children_of(Dwarf_Die die) {
    std::vector<Dwarf_Die> out;
    Dwarf_Die child;
    if (dwarf_child(&die, &child) != 0) {
        return out;
    }
    do {
        out.push_back(child);
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

/// The abstract DIE a concrete one stands for (its DW_AT_abstract_origin), by offset.
std::optional<Dwarf_Off> origin_offset(Dwarf_Die die) {
    if (auto o = internal::ref_attr(die, DW_AT_abstract_origin, false)) {
        return dwarf_dieoffset(&*o);
    }
    return std::nullopt;
}

/// Appends the variables and parameters among `dies` that no concrete child stands for;
/// lexical blocks without a concrete counterpart are read into the same scope.
void inherit(const std::vector<Dwarf_Die>& dies, const std::set<Dwarf_Off>& concrete, int depth,
             std::vector<Dwarf_Die>& out) {
    for (Dwarf_Die d : dies) {
        if (concrete.count(dwarf_dieoffset(&d)) != 0) {
            continue;
        }
        int tag = dwarf_tag(&d);
        if (tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) {
            out.push_back(d);
        } else if (tag == DW_TAG_lexical_block && depth < 16) {
            inherit(children_of(d), concrete, depth + 1, out);
        }
    }
}

}  // namespace

std::vector<Dwarf_Die> scope_members(Dwarf_Die scope) {
    std::vector<Dwarf_Die> out = children_of(scope);
    auto origin = internal::ref_attr(scope, DW_AT_abstract_origin, false);
    if (!origin) {
        return out;
    }
    // The abstract DIEs the scope's own children stand for. As gdb, only direct children
    // count: gcc's concrete block of an inlined copy names no abstract block, and gdb then
    // lists the abstract block's variables too (`sum = <optimized out>` twice).
    std::set<Dwarf_Off> concrete;
    for (Dwarf_Die d : out) {
        if (auto o = origin_offset(d)) {
            concrete.insert(*o);
        }
    }
    inherit(children_of(*origin), concrete, 0, out);
    return out;
}

}  // namespace ompdbg::dwarf
