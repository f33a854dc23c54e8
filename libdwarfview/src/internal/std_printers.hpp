#pragma once
/// What gdb's libstdc++ pretty printers (the python ones gcc ships, which gdb loads by
/// default) show for the standard types users print most: std::string, vector, list, map,
/// set, unordered_map/set, unique_ptr, shared_ptr/weak_ptr, optional. Read from the
/// objects' layout through their DWARF, so nothing runs in the target.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::dwarf {
class eval_context;
}

namespace ompdbg::dwarf::detail {

/// One child as a printer names it ("[0]", "get()", "[contained value]").
struct pretty_child {
    std::string name;
    value val;
};

/// A printer's answer: gdb prints `summary`, then " = {children}" when there are any.
struct pretty_value {
    enum class hint { none, array, map, string };
    std::string summary;                 ///< to_string(): "std::vector of length 3, capacity 3"
    std::vector<pretty_child> children;  ///< at most the limit asked for
    bool more_children = false;          ///< children beyond the limit exist ("...")
    hint display = hint::none;           ///< 'array': values only; 'map': [key] = value pairs
    /// hint::string: the characters of a std::string (printed as a C string literal).
    std::vector<std::uint32_t> text;
};

/// The pretty form of struct value `v` (type `stripped`, cv and typedefs removed) when it is
/// one of the libstdc++ types above; nullopt for every other type and for layouts it does
/// not recognise (then the raw structure is printed, as gdb does without its printers).
/// Throws ompdbg::error when the object's memory cannot be read.
std::optional<pretty_value> libstdcxx_pretty(const value& v, const type& stripped, eval_context& ctx,
                                             std::size_t max_children);

/// gdb's libstdc++ xmethods without python: `v[i]` of a std::vector (no bounds check, as
/// operator[]), nullopt for any other type.
std::optional<value> libstdcxx_subscript(const value& v, const type& stripped, std::int64_t index,
                                         eval_context& ctx);
/// `*p` and `p->m` of a std::unique_ptr / std::shared_ptr / std::weak_ptr: the pointee as an
/// lvalue; nullopt for any other type. Throws "Attempt to take contents of a null pointer"
/// style errors as the pointer's own dereference would.
std::optional<value> libstdcxx_pointee(const value& v, const type& stripped, eval_context& ctx);

/// gdb's libstdc++ xmethods for calls that need no code of the program: `size()`,
/// `empty()`, `length()` of strings, vectors, maps, sets and unordered containers,
/// `at(i)`, `front()`, `back()` of a vector, `get()` of smart pointers, `c_str()` and
/// `data()` of a string. nullopt for any other type or method (a real call then).
/// Throws gdb's range error for `at(i)` past the end.
std::optional<value> libstdcxx_method(const value& obj, const type& stripped, const std::string& name,
                                      const std::vector<value>& args, eval_context& ctx);

}  // namespace ompdbg::dwarf::detail
