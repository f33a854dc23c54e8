// Side effects of an expression's AST (expr_effects.hpp).

#include "ompdbg/dwarf/expr_effects.hpp"

#include "internal/expr_ast.hpp"

namespace ompdbg::dwarf {

namespace {

/// The operand as the user could have written it, for the message: identifiers, members,
/// indexes and calls of them; "..." for anything more involved.
std::string sketch(const expression& e) {
    switch (e.k) {
        case expression::kind::identifier:
            return e.text;
        case expression::kind::dollar:
            return "$" + e.text;
        case expression::kind::integer:
            return std::to_string(e.ival);
        case expression::kind::member:
            return sketch(*e.kids[0]) + "." + e.text;
        case expression::kind::arrow:
            return sketch(*e.kids[0]) + "->" + e.text;
        case expression::kind::index:
            return sketch(*e.kids[0]) + "[" + sketch(*e.kids[1]) + "]";
        case expression::kind::unary:
            return e.op + sketch(*e.kids[0]);
        default:
            return "...";
    }
}

std::string call_text(const expression& e) {
    std::string args;
    for (std::size_t i = 1; i < e.kids.size(); ++i) {
        args += (i > 1 ? ", " : "") + sketch(*e.kids[i]);
    }
    return sketch(*e.kids[0]) + "(" + args + ")";
}

}  // namespace

std::optional<std::string> side_effect_of(const expression& e) {
    switch (e.k) {
        case expression::kind::assign:
            return "an assignment (" + sketch(*e.kids[0]) + " " + e.op + " " + sketch(*e.kids[1]) + ")";
        case expression::kind::postfix:
            return std::string(e.op == "++" ? "an increment (" : "a decrement (") + sketch(*e.kids[0]) + e.op + ")";
        case expression::kind::unary:
            if (e.op == "++" || e.op == "--") {
                return std::string(e.op == "++" ? "an increment (" : "a decrement (") + e.op + sketch(*e.kids[0]) +
                       ")";
            }
            break;
        case expression::kind::call:
            return "a function call (" + call_text(e) + ")";
        case expression::kind::sizeof_expr:
        case expression::kind::sizeof_type:
            return std::nullopt;   // unevaluated operand
        default:
            break;
    }
    for (const auto& kid : e.kids) {
        if (kid) {
            if (auto effect = side_effect_of(*kid)) {
                return effect;
            }
        }
    }
    return std::nullopt;
}

}  // namespace ompdbg::dwarf
