#pragma once
// The scalar pieces of a printed value, spelled as gdb 13 does (value_literals.cpp): hex
// numbers, char and string literals with their escapes and repeats, floats, enums.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf::detail {

std::string hex(std::uint64_t v);
std::string char_literal(std::uint32_t c, const std::string& prefix = "");
std::string print_string(const std::vector<std::uint32_t>& s, std::size_t limit, std::size_t repeat_threshold,
                         bool force_ellipses, const std::string& prefix = "");
std::string format_float(const value& v);
std::optional<std::string> wide_prefix(const type& t);
std::string format_enum(const value& v);

}  // namespace ompdbg::dwarf::detail
