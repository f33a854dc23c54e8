#pragma once
/// The source language of a DIE's unit, for the rules that differ by language (C++ names,
/// casts and `this`).

#include <elfutils/libdw.h>

namespace ompdbg::dwarf {

/// Whether the unit holding `die` is C++ (DW_AT_language of its unit DIE).
bool die_is_cplus(const Dwarf_Die& die);

}  // namespace ompdbg::dwarf
