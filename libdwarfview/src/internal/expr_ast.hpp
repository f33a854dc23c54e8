#pragma once
// The AST of the expression language (expr.hpp) and of type names in casts/sizeof.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {

/// A C abstract declarator around a base type name: pointers (with their cv-qualifiers),
/// array/function suffixes, and a parenthesised inner declarator ("int (*)[3]").
struct declarator_spec {
    struct ptr_op {
        enum class kind { pointer, reference, rvalue_reference } k = kind::pointer;
        bool is_const = false;      ///< `* const`
        bool is_volatile = false;
    };
    struct suffix {
        bool is_function = false;
        std::uint64_t count = 0;                       ///< arrays; 0 = unknown bound
        std::vector<struct type_spec> params;          ///< functions
        bool varargs = false;
        bool prototyped = true;
    };
    std::vector<ptr_op> ptrs;
    std::vector<suffix> suffixes;
    std::shared_ptr<declarator_spec> inner;
};

/// A written type: "unsigned long", "struct point", "point_t", "ns::klass" + declarator.
struct type_spec {
    std::string base;            ///< as written, keywords normalised by single spaces
    bool is_const = false;       ///< `const int`, `int const`
    bool is_volatile = false;
    declarator_spec decl;
};

struct expression {
    enum class kind {
        integer,        ///< ival, text = type name of the literal ("int", "unsigned long")
        floating,       ///< fval, text = "double" / "float" / "long double"
        character,      ///< ival
        string,         ///< text = contents (escapes decoded)
        boolean,        ///< C++ true/false (only when no symbol of that name)
        identifier,     ///< text (may contain ::)
        dollar,         ///< text = what follows '$' ("", "$", "1", "$2", "rip", "foo")
        unary,          ///< op in - + ! ~ * & ++ -- (prefix)
        postfix,        ///< op ++ --
        binary,         ///< op
        assign,         ///< op "=" or "+=" ...
        ternary,
        member,         ///< kids[0] . text
        arrow,          ///< kids[0] -> text
        index,          ///< kids[0] [ kids[1] ]
        call,           ///< kids[0] ( kids[1..] )
        cast,           ///< (ts) kids[0]
        sizeof_expr,
        sizeof_type,
        comma,
    };
    kind k = kind::integer;
    std::string op;
    std::string text;
    std::uint64_t ival = 0;
    long double fval = 0;
    std::vector<std::shared_ptr<const expression>> kids;
    std::shared_ptr<type_spec> ts;
};

using expr_ptr = std::shared_ptr<const expression>;

/// Parses `text` as a type name only; nullptr when it is not one.
std::shared_ptr<type_spec> parse_type_spec(std::string_view text, eval_context* ctx);

/// Evaluates without reading the final value (whatis/ptype of `*(int *)0`).
value evaluate_lazy(const expression& e, eval_context& ctx);

/// Resolves a written type against the context and gdb's builtin C types; throws
/// "No symbol \"foo\" in current context." / "No struct type named foo." when unknown.
type resolve_type_spec(const type_spec& ts, eval_context& ctx);

}  // namespace ompdbg::dwarf
