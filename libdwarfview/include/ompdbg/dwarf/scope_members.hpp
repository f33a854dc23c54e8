#pragma once
/// gdb's view of the members of a DWARF scope (dwarf2/read.c inherit_abstract_dies).

#include <vector>

#include <elfutils/libdw.h>

namespace ompdbg::dwarf {

/// The DIEs a scope (subprogram, inlined subroutine, lexical block) holds as gdb reads it:
/// its own children, then the variables and parameters of its abstract origin that none of
/// them stands for. Compilers drop a parameter that has no location from an inlined copy or
/// a clone (gcc's `f.isra.0`); gdb still lists it, as `<optimized out>`. The variables of
/// an abstract lexical block that no concrete child stands for come with them, as gdb reads
/// a block without addresses into its parent.
std::vector<Dwarf_Die> scope_members(Dwarf_Die scope);

}  // namespace ompdbg::dwarf
