#pragma once
/// A value taken apart into what comparing it with another value needs: numbers as
/// numbers, arrays and structs as named parts, C++ containers (std::vector, std::map ...)
/// as their elements, never their capacity or addresses. Built once per value; the
/// comparison itself (grouping, tolerance) lives with its users.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {

struct value_tree {
    enum class kind {
        integer,     ///< integers, chars, bools, enums: `number` is exact
        floating,    ///< float, double, long double: `number`
        other,       ///< pointers, strings, unions, anything compared by its text
        aggregate,   ///< arrays, structs, containers: `parts`
    };
    kind k = kind::other;
    /// As `print` shows it (gdb's format). For an aggregate, only at the root.
    std::string text;
    long double number = 0;
    /// Aggregates: each part with its name as written after the parent ("[3]", ".y";
    /// container elements "[i]").
    std::vector<std::pair<std::string, value_tree>> parts;
    /// Aggregates whose parts are fields (structs, classes), not elements.
    bool has_fields = false;
    /// The value had more leaves than decompose_value takes apart (the rest is left out).
    bool truncated = false;

    bool is_number() const { return k == kind::integer || k == kind::floating; }
};

/// Takes `v` apart. `max_leaves` bounds the work for huge arrays (the tree is then
/// `truncated`). Throws ompdbg::error as format_value does when the value itself cannot be
/// read ("Cannot access memory at address 0x..."); parts that are optimized out are
/// leaves whose text says so.
value_tree decompose_value(const value& v, eval_context& ctx, const format_options& opts = {},
                           std::size_t max_leaves = 100000);

}  // namespace ompdbg::dwarf
