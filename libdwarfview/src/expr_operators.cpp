// The evaluator's operators: unary and binary arithmetic with C's integer promotions and
// usual arithmetic conversions, comparisons, logical operators, `@`, and pointer arithmetic
// scaled by the element size.

#include <string>

#include "internal/expr_evaluator.hpp"
#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf::detail {

namespace {

bool is_arith(const type& t) { return detail::is_integral(t) || detail::is_floating(t); }

}  // namespace

value evaluator::boolean_result(bool b) {
    if (ctx_.language_cplus()) {
        return make_int(detail::bool_type(), b ? 1 : 0);
    }
    return make_int(detail::int_type(), b ? 1 : 0);
}

value evaluator::unary(const expression& e) {
    const std::string& op = e.op;
    if (op == "&") {
        value v = lvalue_of(*e.kids[0]);
        auto s = v.val_type.strip_cv_typedef();
        if (s.kind() == type_kind::function) {
            return make_int(type::pointer_to(v.val_type), v.address.value_or(0));
        }
        if (!v.address) {
            error::send("Attempt to take address of value not located in memory.");
        }
        return make_int(type::pointer_to(v.val_type), *v.address);
    }
    if (op == "*") {
        value v = coerce(rv(*e.kids[0]));
        auto s = v.val_type.strip_cv_typedef();
        if (s.kind() == type_kind::pointer) {
            auto target = s.target().value_or(type());
            if (target.is_void()) {
                error::send("Attempt to dereference a generic pointer.");
            }
            value out = detail::lvalue_at(target, raw_bits(v));
            return out;
        }
        if (is_nodebug_function(s)) {
            return v;   // `*func` is the function, as in C
        }
        if (detail::is_integral(s) && !detail::is_floating(s)) {
            return detail::lvalue_at(detail::long_type(), static_cast<std::uint64_t>(to_int(v)));
        }
        if (is_struct(s)) {
            if (auto p = detail::libstdcxx_pointee(v, s, ctx_)) {
                return *p;
            }
        }
        error::send("Attempt to take contents of a non-pointer value.");
    }
    if (op == "{}") {
        type t = resolve_type_spec(*e.ts, ctx_);
        value a = coerce(rv(*e.kids[0]));
        return detail::lvalue_at(t, static_cast<std::uint64_t>(as_integer(a)));
    }
    if (op == "++" || op == "--") {
        value target = lvalue_of(*e.kids[0]);
        value cur = target;
        fetch(cur, ctx_);
        value updated = binop(op == "++" ? "+" : "-", coerce(cur), make_int(detail::int_type(), 1));
        return store(target, updated);
    }
    value v = coerce(rv(*e.kids[0]));
    auto s = v.val_type.strip_cv_typedef();
    if (op == "!") {
        if (is_struct(s)) {
            error::send("Structure has no component named operator!.");
        }
        return boolean_result(!is_true(v));
    }
    if (is_struct(s)) {
        error::send("Structure has no component named operator" + op + ".");
    }
    if (op == "~") {
        if (!detail::is_integral(s)) {
            error::send("Argument to complement operation not an integer, boolean.");
        }
        type pt = promote(s);
        return make_int(pt, ~static_cast<std::uint64_t>(to_int(v)));
    }
    if (detail::is_floating(s)) {
        long double f = detail::to_float(v);
        return make_float(v.val_type, op == "-" ? -f : f);
    }
    if (!detail::is_integral(s)) {
        error::send(op == "-" ? "Argument to negate operation not a number."
                              : "Argument to positive operation not a number.");
    }
    type pt = promote(s);
    std::uint64_t x = static_cast<std::uint64_t>(to_int(v));
    return make_int(pt, op == "-" ? (~x + 1) : x);
}

// Integer promotion of one operand (gdb's unop_promote).
type evaluator::promote(const type& t) {
    auto len = t.strip_cv_typedef().size();
    if (len < 4) {
        return detail::int_type();
    }
    return t.strip_cv_typedef();
}

// gdb's binop_promote for C: the result type of arithmetic on two integers.
type evaluator::arith_type(const type& a, const type& b) {
    auto sa = a.strip_cv_typedef();
    auto sb = b.strip_cv_typedef();
    std::uint64_t la = sa.size();
    std::uint64_t lb = sb.size();
    bool ua = !detail::is_signed(sa);
    bool ub = !detail::is_signed(sb);
    if (la < 4) {
        la = 4;
        ua = false;
    }
    if (lb < 4) {
        lb = 4;
        ub = false;
    }
    bool is_unsigned;
    std::uint64_t len;
    if (la > lb) {
        is_unsigned = ua;
        len = la;
    } else if (lb > la) {
        is_unsigned = ub;
        len = lb;
    } else {
        is_unsigned = ua || ub;
        len = la;
    }
    if (len <= 4) {
        return *detail::builtin_type(is_unsigned ? "unsigned int" : "int");
    }
    if (len <= 8) {
        // Keep a DWARF-named `long long` operand's spelling when both are 8 bytes.
        return *detail::builtin_type(is_unsigned ? "unsigned long" : "long");
    }
    return *detail::builtin_type(is_unsigned ? "unsigned __int128" : "__int128");
}

value evaluator::binary(const expression& e) {
    const std::string& op = e.op;
    if (op == "&&") {
        if (!is_true(coerce(rv(*e.kids[0])))) {
            return boolean_result(false);
        }
        return boolean_result(is_true(coerce(rv(*e.kids[1]))));
    }
    if (op == "||") {
        if (is_true(coerce(rv(*e.kids[0])))) {
            return boolean_result(true);
        }
        return boolean_result(is_true(coerce(rv(*e.kids[1]))));
    }
    if (op == "@") {
        value lhs = lvalue_of(*e.kids[0]);
        value n = rv(*e.kids[1]);
        if (!detail::is_integral(n.val_type)) {
            not_a_number();
        }
        std::int64_t count = to_int(n);
        if (!lhs.address) {
            error::send("Only values in memory can be extended with '@'.");
        }
        if (count <= 0) {
            error::send("Invalid number " + std::to_string(count) + " of repetitions.");
        }
        detail::check_value_size(static_cast<std::uint64_t>(count) * lhs.val_type.size());
        value out = detail::lvalue_at(type::array_of(lhs.val_type, static_cast<std::uint64_t>(count)),
                                      *lhs.address);
        return out;
    }
    value a = coerce(rv(*e.kids[0]));
    value b = coerce(rv(*e.kids[1]));
    return binop(op, a, b);
}

value evaluator::binop(const std::string& op, const value& a, const value& b) {
    auto sa = a.val_type.strip_cv_typedef();
    auto sb = b.val_type.strip_cv_typedef();
    bool cmp = op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=";
    if (is_struct(sa) || is_struct(sb)) {
        error::send("Structure has no component named operator" + op + ".");
    }
    bool pa = sa.kind() == type_kind::pointer;
    bool pb = sb.kind() == type_kind::pointer;
    if (pa || pb) {
        return pointer_op(op, a, b, pa, pb, cmp);
    }
    if (!is_arith(sa) || !is_arith(sb)) {
        not_a_number();
    }
    if (detail::is_floating(sa) || detail::is_floating(sb)) {
        long double x = detail::is_floating(sa) ? detail::to_float(a) : int_as_float(a);
        long double y = detail::is_floating(sb) ? detail::to_float(b) : int_as_float(b);
        if (cmp) {
            return boolean_result(compare(op, x, y));
        }
        type rt = !detail::is_floating(sb)  ? sa
                  : !detail::is_floating(sa) ? sb
                  : sa.size() >= sb.size()   ? sa
                                             : sb;
        long double r;
        if (op == "+") {
            r = x + y;
        } else if (op == "-") {
            r = x - y;
        } else if (op == "*") {
            r = x * y;
        } else if (op == "/") {
            r = x / y;
        } else if (op == "%" || op == "<<" || op == ">>" || op == "&" || op == "|" || op == "^") {
            error::send("Integer-only operation on floating point number.");
        } else {
            not_a_number();
        }
        return make_float(rt, r);
    }
    type rt = arith_type(sa, sb);
    bool is_unsigned = !detail::is_signed(rt);
    unsigned bits = static_cast<unsigned>(rt.size() * 8);
    std::uint64_t x = static_cast<std::uint64_t>(to_int(a));
    std::uint64_t y = static_cast<std::uint64_t>(to_int(b));
    if (bits < 64) {
        std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
        x &= mask;
        y &= mask;
    }
    auto sx = [&](std::uint64_t v) {
        if (bits < 64 && ((v >> (bits - 1)) & 1)) {
            v |= ~((std::uint64_t{1} << bits) - 1);
        }
        return static_cast<std::int64_t>(v);
    };
    if (cmp) {
        if (is_unsigned) {
            return boolean_result(compare(op, x, y));
        }
        return boolean_result(compare(op, sx(x), sx(y)));
    }
    std::uint64_t r = 0;
    if (op == "+") {
        r = x + y;
    } else if (op == "-") {
        r = x - y;
    } else if (op == "*") {
        r = x * y;
    } else if (op == "/" || op == "%") {
        if (y == 0) {
            error::send("Division by zero");
        }
        if (is_unsigned) {
            r = op == "/" ? x / y : x % y;
        } else {
            std::int64_t p = sx(x);
            std::int64_t q = sx(y);
            if (q == -1) {
                r = op == "/" ? ~x + 1 : 0;
            } else {
                r = static_cast<std::uint64_t>(op == "/" ? p / q : p % q);
            }
        }
    } else if (op == "<<" || op == ">>") {
        std::int64_t count = detail::is_signed(sb) ? to_int(b) : static_cast<std::int64_t>(y);
        // gdb warns and yields 0 for counts outside [0, width).
        rt = promote(sa);
        is_unsigned = !detail::is_signed(rt);
        bits = static_cast<unsigned>(rt.size() * 8);
        std::uint64_t lhs = static_cast<std::uint64_t>(to_int(a));
        if (count < 0 || count >= static_cast<std::int64_t>(bits)) {
            r = 0;
        } else if (op == "<<") {
            r = lhs << count;
        } else if (is_unsigned) {
            if (bits < 64) {
                lhs &= (std::uint64_t{1} << bits) - 1;
            }
            r = lhs >> count;
        } else {
            r = static_cast<std::uint64_t>(to_int(a) >> count);
        }
    } else if (op == "&") {
        r = x & y;
    } else if (op == "|") {
        r = x | y;
    } else if (op == "^") {
        r = x ^ y;
    } else {
        not_a_number();
    }
    return make_int(rt, r);
}

long double evaluator::int_as_float(const value& v) {
    if (detail::is_signed(v.val_type)) {
        return static_cast<long double>(to_int(v));
    }
    return static_cast<long double>(static_cast<std::uint64_t>(to_int(v)) &
                                    (v.val_type.size() >= 8 ? ~std::uint64_t{0}
                                                            : (std::uint64_t{1} << (v.val_type.size() * 8)) - 1));
}

template <typename T>
bool evaluator::compare(const std::string& op, T x, T y) {
    if (op == "==") {
        return x == y;
    }
    if (op == "!=") {
        return x != y;
    }
    if (op == "<") {
        return x < y;
    }
    if (op == ">") {
        return x > y;
    }
    if (op == "<=") {
        return x <= y;
    }
    return x >= y;
}

std::uint64_t evaluator::element_size(const type& ptr) {
    auto target = ptr.strip_cv_typedef().target().value_or(type());
    auto k = target.strip_cv_typedef().kind();
    if (k == type_kind::void_ || k == type_kind::function) {
        return 1;
    }
    auto n = target.size();
    return n ? n : 1;
}

value evaluator::pointer_op(const std::string& op, const value& a, const value& b, bool pa, bool pb,
                            bool cmp) {
    auto sa = a.val_type.strip_cv_typedef();
    auto sb = b.val_type.strip_cv_typedef();
    auto addr = [](const value& v) { return static_cast<std::uint64_t>(to_int(v)); };
    if (cmp) {
        if ((!pa && !detail::is_integral(sa)) || (!pb && !detail::is_integral(sb))) {
            not_a_number();
        }
        return boolean_result(compare(op, addr(a), addr(b)));
    }
    if (op == "+" && pa != pb) {
        const value& p = pa ? a : b;
        const value& n = pa ? b : a;
        if (!detail::is_integral(n.val_type)) {
            not_a_number();
        }
        return make_int(p.val_type, addr(p) + static_cast<std::uint64_t>(to_int(n)) * element_size(p.val_type));
    }
    if (op == "-" && pa && !pb) {
        if (!detail::is_integral(sb)) {
            not_a_number();
        }
        return make_int(a.val_type, addr(a) - static_cast<std::uint64_t>(to_int(b)) * element_size(a.val_type));
    }
    if (op == "-" && pa && pb) {
        auto ea = element_size(a.val_type);
        auto eb = element_size(b.val_type);
        if (ea != eb) {
            error::send("First argument of `-' is a pointer and second argument is neither\n"
                        "an integer nor a pointer of the same type.");
        }
        auto diff = static_cast<std::int64_t>(addr(a) - addr(b));
        return make_int(detail::long_type(), static_cast<std::uint64_t>(diff / static_cast<std::int64_t>(ea)));
    }
    not_a_number();
}

}  // namespace ompdbg::dwarf::detail
