#pragma once
// Function calls in expressions (`sq(7)`, `fp(2)`, `obj.method()`, `v.size()`): choosing the
// callee and its overload, converting the arguments as gdb does, and handing the call to
// the eval_context. The evaluator (expr_eval.cpp) lends its own operations through hooks.

#include <functional>
#include <optional>

#include "internal/expr_ast.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf::detail {

struct call_hooks {
    std::function<value(const expression&)> eval;   ///< a sub-expression, unread (lvalue)
    std::function<value(const expression&)> rv;     ///< a sub-expression's value, read
    std::function<value(const value&, const type&)> cast;
};

/// Evaluates call node `e`. `forced_return` is the type of a cast around the call
/// (`(int) getpid()`): it gives a function without debug info its return type.
value evaluate_call(const expression& e, eval_context& ctx, const call_hooks& hooks,
                    const std::optional<type>& forced_return);

}  // namespace ompdbg::dwarf::detail
