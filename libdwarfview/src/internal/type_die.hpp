#pragma once
// Attribute readers of type DIEs shared by type.cpp, type_name.cpp and type_members.cpp.

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ompdbg::dwarf::detail {

std::optional<Dwarf_Die> type_attr(const Dwarf_Die& die);
bool flag(const Dwarf_Die& die, unsigned name);
std::string die_name(const Dwarf_Die& die);
std::optional<std::uint64_t> udata(Dwarf_Die& die, unsigned name);

}  // namespace ompdbg::dwarf::detail
