#pragma once
/// A value's parts as a variables view opens them, one level at a time: a struct's fields
/// (base classes as `<Base>`, anonymous members' fields in their place), an array's
/// elements, a C++ container's elements as its printer lists them (std::map entries as
/// `[key]`), the record a pointer points to. Each part is a value of its own, opened the
/// same way.

#include <cstddef>
#include <string>
#include <vector>

#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {

struct value_child {
    std::string name;   ///< "x", "<Base>", "[3]", "[\"key\"]", "*" (a pointer's record)
    /// The part as an expression of its parent E: `prefix + "(" + E + ")" + suffix`
    /// (".x", "[3]", "*"); `reachable` is false where no expression names it (a base
    /// class, a container's element).
    std::string prefix;
    std::string suffix;
    bool reachable = true;
    value val;

    std::string expression_of(const std::string& parent) const { return prefix + "(" + parent + ")" + suffix; }
};

/// The parts of `v`, at most `max` (then the list is cut). Empty for scalars, std::string
/// (its text), null pointers and pointers to non-records. Throws
/// ompdbg::error when `v` itself cannot be read.
std::vector<value_child> value_children(const value& v, eval_context& ctx, std::size_t max);

}  // namespace ompdbg::dwarf
