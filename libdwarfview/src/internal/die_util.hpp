#pragma once
// Small helpers over libdw DIEs shared by debug_info and location (names, ranges,
// references), each returning an empty value instead of failing.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <elfutils/libdw.h>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::dwarf::internal {

int tag_of(Dwarf_Die die);
/// DW_AT_name, following DW_AT_abstract_origin / DW_AT_specification; "" when none.
std::string name_of(Dwarf_Die die);
std::string linkage_name_of(Dwarf_Die die);
/// The DIE an attribute refers to (followed through origin/specification when `integrate`).
std::optional<Dwarf_Die> ref_attr(Dwarf_Die die, unsigned attr, bool integrate = true);
bool flag_of(Dwarf_Die die, unsigned attr, bool integrate = true);
std::optional<std::uint64_t> udata_of(Dwarf_Die die, unsigned attr, bool integrate = true);
/// Address ranges of a DIE as listed (DW_AT_low_pc/high_pc or DW_AT_ranges).
std::vector<addr_range> ranges_of(Dwarf_Die die);
/// DW_AT_entry_pc, else DW_AT_low_pc, else the first listed range.
std::optional<std::uint64_t> entry_pc_of(Dwarf_Die die, const std::vector<addr_range>& ranges);
bool has_pc(Dwarf_Die die, std::uint64_t addr);
std::string decl_file_of(Dwarf_Die die);
int decl_line_of(Dwarf_Die die);
/// File name of a file-table index of the DIE's CU (DW_AT_call_file / DW_AT_decl_file).
std::string cu_file_name(Dwarf_Die die, std::uint64_t index);
/// A DIE identity usable as a map key (its position in the mapped debug data).
inline const void* die_key(const Dwarf_Die& die) { return die.addr; }

}  // namespace ompdbg::dwarf::internal
