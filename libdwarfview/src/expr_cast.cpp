// Casts in expressions, and the type names written in casts and sizeof resolved against
// the context and gdb's builtin C types.

#include <cstring>
#include <string>

#include "internal/expr_ast.hpp"
#include "internal/expr_evaluator.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {

namespace detail {

value evaluator::cast(value v, const type& to) {
    auto ts = to.strip_cv_typedef();
    auto k = ts.kind();
    if (k == type_kind::void_) {
        return value{};
    }
    if (k == type_kind::reference || k == type_kind::rvalue_reference) {
        if (!v.address) {
            error::send("Attempt to take address of value not located in memory.");
        }
        value out = detail::lvalue_at(ts.target().value_or(type()), *v.address);
        fetch(out, ctx_);
        return out;
    }
    if (is_struct(ts) || k == type_kind::array) {
        auto vs = v.val_type.strip_cv_typedef();
        if (vs.size() != ts.size()) {
            error::send("Invalid cast.");
        }
        v.val_type = to;
        return v;
    }
    v = coerce(v);
    auto vs = v.val_type.strip_cv_typedef();
    bool from_int = detail::is_integral(vs) || vs.kind() == type_kind::pointer;
    bool from_float = detail::is_floating(vs);
    if (!from_int && !from_float) {
        error::send("Invalid cast.");
    }
    if (detail::is_floating(ts)) {
        long double f = from_float ? detail::to_float(v) : int_as_float(v);
        return make_float(to, f);
    }
    if (detail::is_integral(ts) || k == type_kind::pointer || k == type_kind::ptr_to_member) {
        std::uint64_t x;
        if (from_float) {
            long double f = detail::to_float(v);
            x = detail::float_to_bits(f);
        } else {
            x = static_cast<std::uint64_t>(to_int(v));
        }
        if (ts.kind() == type_kind::base && ts.encoding() == base_encoding::boolean) {
            x = x != 0;
        }
        return make_int(to, x);
    }
    error::send("Invalid cast.");
}

}  // namespace detail

namespace {

type apply_declarator(type t, const declarator_spec& d, eval_context& ctx) {
    for (auto& p : d.ptrs) {
        switch (p.k) {
            case declarator_spec::ptr_op::kind::pointer:
                t = type::pointer_to(t);
                break;
            default:
                t = type::reference_to(t);
                break;
        }
        if (p.is_volatile) {
            t = type::volatile_of(t);
        }
        if (p.is_const) {
            t = type::const_of(t);
        }
    }
    for (auto it = d.suffixes.rbegin(); it != d.suffixes.rend(); ++it) {
        if (it->is_function) {
            std::vector<type> params;
            for (auto& p : it->params) {
                params.push_back(resolve_type_spec(p, ctx));
            }
            t = type::function_of(t, std::move(params), it->varargs, it->prototyped);
        } else {
            t = type::array_of(t, it->count);
        }
    }
    if (d.inner) {
        t = apply_declarator(t, *d.inner, ctx);
    }
    return t;
}

}  // namespace

type resolve_type_spec(const type_spec& ts, eval_context& ctx) {
    const std::string& base = ts.base;
    std::optional<type> t;
    for (const char* kw : {"struct ", "union ", "enum "}) {
        if (base.rfind(kw, 0) == 0) {
            t = ctx.lookup_type(base);
            if (!t && std::string(kw) == "struct ") {
                // C++ classes are found without the keyword too.
                t = ctx.lookup_type(base.substr(7));
            }
            if (!t) {
                std::string what = std::string(kw).substr(0, std::strlen(kw) - 1);
                error::send("No " + what + " type named " + base.substr(std::strlen(kw)) + ".");
            }
        }
    }
    if (!t) {
        if (auto b = detail::builtin_type(base)) {
            t = ctx.lookup_type(base);
            if (!t || t->strip_cv_typedef().kind() != type_kind::base || t->name() != b->name()) {
                t = b;
            }
        } else {
            t = ctx.lookup_type(base);
            if (!t) {
                error::send("No symbol \"" + base + "\" in current context.");
            }
        }
    }
    type out = *t;
    if (ts.is_volatile) {
        out = type::volatile_of(out);
    }
    if (ts.is_const) {
        out = type::const_of(out);
    }
    return apply_declarator(out, ts.decl, ctx);
}

std::optional<type> parse_type(std::string_view text, eval_context& ctx) {
    auto ts = parse_type_spec(text, &ctx);
    if (!ts) {
        return std::nullopt;
    }
    return resolve_type_spec(*ts, ctx);
}

}  // namespace ompdbg::dwarf
