#pragma once
// The C declarator printer behind type::name(), reusable by ptype: a style can resolve
// typedefs and replace the text of leaf types (struct bodies).

#include <functional>
#include <optional>
#include <string>

#include "ompdbg/dwarf/type.hpp"

namespace ompdbg::dwarf::detail {

struct print_style {
    bool resolve_typedefs = false;
    /// Text for a struct/union/class/enum leaf (its body), or nullopt to print its name.
    std::function<std::optional<std::string>(const type&)> leaf;
};

/// `t` declaring `inner` ("", "name", "*p"), as gdb spells it.
std::string declarator_text(const type& t, const std::string& inner, const print_style* style);

/// DW_AT_accessibility of a member DIE with the language default of its parent.
enum class access { public_, protected_, private_ };

}  // namespace ompdbg::dwarf::detail
