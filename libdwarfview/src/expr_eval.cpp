// The evaluator: C semantics (integer promotions, usual arithmetic conversions, pointer
// arithmetic scaled by the element size) over an eval_context, with gdb 13's error
// messages.

#include <cmath>
#include <cstring>
#include <string>

#include "internal/expr_ast.hpp"
#include "internal/expr_call.hpp"
#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {

void eval_context::write_dwarf_register(int regno, std::uint64_t v) {
    (void)v;
    error::send("Cannot write register " + std::to_string(regno) + " in this frame.");
}

namespace {

using detail::fetch;
using detail::make_float;
using detail::make_int;
using detail::raw_bits;
using detail::to_int;

[[noreturn]] void not_a_number() {
    error::send("Argument to arithmetic operation not a number or boolean.");
}

bool is_struct(const type& t) {
    auto k = t.strip_cv_typedef().kind();
    return k == type_kind::structure || k == type_kind::class_ || k == type_kind::union_;
}

bool is_arith(const type& t) { return detail::is_integral(t) || detail::is_floating(t); }

// Registers gdb knows by name on x86-64 and the types it gives them. `cplus`: gdb's C++
// printer spells $pc's empty parameter list "(void)", its C printer "()".
std::optional<type> register_type(std::string_view name, bool cplus = false) {
    static const char* r64[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
                                "r12", "r13", "r14", "r15", "orig_rax", "fs_base", "gs_base"};
    static const char* r32[] = {"eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "r8d",
                                "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d",
                                "cs", "ss", "ds", "es", "fs", "gs"};
    static const char* r16[] = {"ax", "bx", "cx", "dx", "si", "di", "bp", "sp16", "r8w", "r9w",
                                "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"};
    static const char* r8[] = {"al", "bl", "cl", "dl", "sil", "dil", "bpl", "spl", "ah", "bh", "ch",
                               "dh", "r8l", "r9l", "r10l", "r11l", "r12l", "r13l", "r14l", "r15l"};
    if (name == "rip" || name == "pc") {
        return type::pointer_to(type::function_of(type(), {}, false, cplus));
    }
    if (name == "rsp" || name == "sp" || name == "rbp" || name == "fp") {
        return type::pointer_to(type());
    }
    if (name == "eflags") {
        return type::make_base("i386_eflags", 4, base_encoding::unsigned_int);
    }
    if (name == "fs_base" || name == "gs_base") {
        return detail::long_type();
    }
    for (const char* r : r64) {
        if (name == r) {
            return type::make_base("int64_t", 8, base_encoding::signed_int);
        }
    }
    for (const char* r : r32) {
        if (name == r) {
            return type::make_base("int32_t", 4, base_encoding::signed_int);
        }
    }
    for (const char* r : r16) {
        if (name == r) {
            return type::make_base("int16_t", 2, base_encoding::signed_int);
        }
    }
    for (const char* r : r8) {
        if (name == r) {
            return type::make_base("int8_t", 1, base_encoding::signed_int);
        }
    }
    return std::nullopt;
}

bool all_digits(std::string_view s) {
    if (s.empty()) {
        return false;
    }
    for (char c : s) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

class evaluator {
public:
    explicit evaluator(eval_context& ctx) : ctx_(ctx) {}

    value eval(const expression& e) {
        using K = expression::kind;
        switch (e.k) {
            case K::integer:
                return make_int(*detail::builtin_type(e.text), e.ival);
            case K::floating:
                return make_float(*detail::builtin_type(e.text), e.fval);
            case K::character:
                return make_int(detail::char_type(), e.ival);
            case K::boolean:
                return make_int(detail::bool_type(), e.ival);
            case K::string: {
                value v;
                v.val_type = type::array_of(detail::char_type(), e.text.size() + 1);
                v.bytes.resize(e.text.size() + 1);
                std::memcpy(v.bytes.data(), e.text.data(), e.text.size());
                return v;
            }
            case K::identifier:
                return identifier(e.text);
            case K::dollar:
                return dollar(e.text);
            case K::unary:
                return unary(e);
            case K::postfix: {
                value old = rv(*e.kids[0]);
                value one = make_int(detail::int_type(), 1);
                value updated = binop(e.op == "++" ? "+" : "-", old, one);
                store(lvalue_of(*e.kids[0]), updated);
                return old;
            }
            case K::binary:
                return binary(e);
            case K::assign:
                return assign(e);
            case K::ternary:
                return is_true(rv(*e.kids[0])) ? eval(*e.kids[1]) : eval(*e.kids[2]);
            case K::member:
            case K::arrow:
                return member_access(e);
            case K::index:
                return index(e);
            case K::call:
                return call(e, std::nullopt);
            case K::cast: {
                type to = resolve_type_spec(*e.ts, ctx_);
                if (e.kids[0]->k == K::call) {
                    // `(int) getpid()`: the cast gives a function without debug info its type.
                    return cast(call(*e.kids[0], to), to);
                }
                return cast(rv(*e.kids[0]), to);
            }
            case K::sizeof_type:
                return make_int(detail::int_type(), resolve_type_spec(*e.ts, ctx_).size());
            case K::sizeof_expr: {
                auto& kid = *e.kids[0];
                type t;
                if (kid.k == K::identifier && !ctx_.lookup_variable(kid.text)) {
                    if (auto ty = ctx_.lookup_type(kid.text)) {
                        return make_int(detail::int_type(), ty->size());
                    }
                }
                value v = eval(kid);
                t = v.val_type.strip_cv_typedef();
                if (t.kind() == type_kind::reference || t.kind() == type_kind::rvalue_reference) {
                    t = t.target().value_or(type());
                }
                return make_int(detail::int_type(), t.size());
            }
            case K::comma:
                eval(*e.kids[0]);
                return eval(*e.kids[1]);
        }
        error::send("unsupported expression");
    }

    // The value of an operand: references followed, lazy lvalues read.
    value rv(const expression& e) {
        value v = detail::deref_reference(eval(e), ctx_);
        fetch(v, ctx_);
        return v;
    }

private:
    value call(const expression& e, const std::optional<type>& forced_return) {
        detail::call_hooks hooks{
            [this](const expression& x) { return eval(x); },
            [this](const expression& x) { return rv(x); },
            [this](const value& v, const type& t) { return cast(v, t); },
        };
        return detail::evaluate_call(e, ctx_, hooks, forced_return);
    }

    value boolean_result(bool b) {
        if (ctx_.language_cplus()) {
            return make_int(detail::bool_type(), b ? 1 : 0);
        }
        return make_int(detail::int_type(), b ? 1 : 0);
    }

    value identifier(const std::string& raw) {
        std::string name = raw.rfind("::", 0) == 0 ? raw.substr(2) : raw;
        if (auto v = ctx_.lookup_variable(name)) {
            return *v;
        }
        if (auto v = ctx_.lookup_enumerator(name)) {
            return *v;
        }
        if (auto v = ctx_.lookup_function(name)) {
            return *v;
        }
        if (name == "true" || name == "false") {
            return make_int(detail::bool_type(), name == "true");
        }
        if (name == "nullptr" && ctx_.language_cplus()) {
            return make_int(type::pointer_to(type()), 0);
        }
        error::send("No symbol \"" + name + "\" in current context.");
    }

    value history(int index) {
        if (auto v = ctx_.history(index)) {
            return *v;
        }
        int size = ctx_.history_size();
        if (index <= 0) {
            if (index == 0 && size <= 0) {
                error::send("The history is empty.");
            }
            error::send("History does not go back to $$" + std::to_string(-index) + ".");
        }
        error::send("History has not yet reached $" + std::to_string(index) + ".");
    }

    value dollar(const std::string& name) {
        if (name.empty()) {
            return history(0);
        }
        if (name == "$") {
            return history(-1);
        }
        if (name[0] == '$' && all_digits(name.substr(1))) {
            return history(-std::stoi(name.substr(1)));
        }
        if (all_digits(name)) {
            return history(std::stoi(name));
        }
        if (auto rt = register_type(name, ctx_.language_cplus())) {
            auto r = ctx_.read_register(name);
            if (!r) {
                error::send("No registers.");
            }
            value v = make_int(*rt, *r);
            v.register_name = name;
            return v;
        }
        if (auto v = ctx_.convenience(name)) {
            return *v;
        }
        return value{};  // an unset convenience variable is void
    }

    // Arrays decay to pointers to their first element, functions to function pointers.
    value coerce(value v) {
        auto s = v.val_type.strip_cv_typedef();
        if (s.kind() == type_kind::array) {
            if (!v.address) {
                error::send("Attempt to take address of value not located in memory.");
            }
            return make_int(type::pointer_to(s.target().value_or(type())), *v.address);
        }
        if (s.kind() == type_kind::function) {
            return make_int(type::pointer_to(v.val_type), v.address.value_or(0));
        }
        return v;
    }

    value lvalue_of(const expression& e) { return detail::deref_reference(eval(e), ctx_); }

    value unary(const expression& e) {
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
    type promote(const type& t) {
        auto len = t.strip_cv_typedef().size();
        if (len < 4) {
            return detail::int_type();
        }
        return t.strip_cv_typedef();
    }

    // gdb's binop_promote for C: the result type of arithmetic on two integers.
    type arith_type(const type& a, const type& b) {
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

    value binary(const expression& e) {
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

    value binop(const std::string& op, const value& a, const value& b) {
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

    static long double int_as_float(const value& v) {
        if (detail::is_signed(v.val_type)) {
            return static_cast<long double>(to_int(v));
        }
        return static_cast<long double>(static_cast<std::uint64_t>(to_int(v)) &
                                        (v.val_type.size() >= 8 ? ~std::uint64_t{0}
                                                                : (std::uint64_t{1} << (v.val_type.size() * 8)) - 1));
    }

    template <typename T>
    static bool compare(const std::string& op, T x, T y) {
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

    static std::uint64_t element_size(const type& ptr) {
        auto target = ptr.strip_cv_typedef().target().value_or(type());
        auto k = target.strip_cv_typedef().kind();
        if (k == type_kind::void_ || k == type_kind::function) {
            return 1;
        }
        auto n = target.size();
        return n ? n : 1;
    }

    value pointer_op(const std::string& op, const value& a, const value& b, bool pa, bool pb, bool cmp) {
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

    // The bits of `nv` (of the field's declared type) a `w`-bit field stores, as gdb 13's
    // modify_field: a negative value that fits loses its sign extension; one that does not
    // fit is truncated with gdb's warning.
    std::uint64_t bitfield_bits(const value& nv, unsigned w, std::uint64_t field_mask) {
        std::uint64_t bits = raw_bits(nv);
        std::uint64_t size = nv.val_type.strip_cv_typedef().size();
        if (size > 0 && size < 8) {
            std::uint64_t top = std::uint64_t{1} << (size * 8 - 1);
            bits &= (top << 1) - 1;
            if (detail::is_signed(nv.val_type.strip_cv_typedef()) && (bits & top) != 0) {
                bits |= ~((top << 1) - 1);
            }
        }
        if ((~bits & ~(field_mask >> 1)) == 0) {
            bits &= field_mask;
        }
        if ((bits & ~field_mask) != 0) {
            ctx_.warn("Value does not fit in " + std::to_string(w) + " bits.");
            bits &= field_mask;
        }
        return bits;
    }

    // Writes `v` (converted to the lvalue's type) into `target`; returns the new value.
    value store(const value& target, const value& v) {
        if (!target.is_lvalue()) {
            error::send("Left operand of assignment is not an lvalue.");
        }
        value nv;
        auto ts = target.val_type.strip_cv_typedef();
        if (is_struct(ts) || ts.kind() == type_kind::array) {
            value src = v;
            fetch(src, ctx_);
            if (src.val_type.strip_cv_typedef().size() != ts.size() ||
                src.val_type.strip_cv_typedef().name() != ts.name()) {
                error::send("Invalid cast.");
            }
            nv = src;
            nv.val_type = target.val_type;
        } else {
            nv = cast(coerce(v), target.val_type);
        }
        value out = nv;
        out.address = target.address;
        out.dwarf_register = target.dwarf_register;
        out.register_name = target.register_name;
        if (target.bit_size) {
            // Read-modify-write of the storage bytes that hold the bitfield.
            value storage = target;
            storage.bytes.clear();
            fetch(storage, ctx_);
            std::uint64_t word = 0;
            std::memcpy(&word, storage.bytes.data(), std::min<std::size_t>(8, storage.bytes.size()));
            unsigned w = *target.bit_size;
            std::uint64_t field_mask = w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w) - 1;
            std::uint64_t mask = field_mask << target.bit_offset;
            word = (word & ~mask) | ((bitfield_bits(nv, w, field_mask) << target.bit_offset) & mask);
            std::memcpy(storage.bytes.data(), &word, std::min<std::size_t>(8, storage.bytes.size()));
            if (target.address) {
                ctx_.write_memory(*target.address, storage.bytes);
            } else {
                error::send("Left operand of assignment is not an lvalue.");
            }
            out.bit_size = target.bit_size;
            out.bit_offset = target.bit_offset;
            out.bytes = storage.bytes;
            return out;
        }
        if (target.address) {
            ctx_.write_memory(*target.address, nv.bytes);
        } else if (!target.register_name.empty()) {
            ctx_.write_register(target.register_name, raw_bits(nv));
        } else if (target.dwarf_register) {
            ctx_.write_dwarf_register(*target.dwarf_register, raw_bits(nv));
        }
        return out;
    }

    value assign(const expression& e) {
        auto& lhs_e = *e.kids[0];
        // Convenience variables ($foo = 3) take the value and type of the right side.
        if (lhs_e.k == expression::kind::dollar && !register_type(lhs_e.text) &&
            !all_digits(lhs_e.text) && !lhs_e.text.empty() && lhs_e.text[0] != '$') {
            value v;
            if (e.op == "=") {
                v = rv(*e.kids[1]);
            } else {
                v = binop(e.op.substr(0, e.op.size() - 1), coerce(rv(lhs_e)), coerce(rv(*e.kids[1])));
            }
            value stored = v;
            stored.address.reset();
            stored.dwarf_register.reset();
            stored.register_name.clear();
            stored.bit_size.reset();
            ctx_.set_convenience(lhs_e.text, stored);
            return stored;
        }
        value target = lvalue_of(lhs_e);
        value rhs = rv(*e.kids[1]);
        if (!target.is_lvalue()) {
            error::send("Left operand of assignment is not an lvalue.");
        }
        if (e.op != "=") {
            value cur = target;
            fetch(cur, ctx_);
            rhs = binop(e.op.substr(0, e.op.size() - 1), coerce(cur), coerce(rhs));
        }
        return store(target, rhs);
    }

public:
    value cast(value v, const type& to) {
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

private:
    // Finds `name` in a struct, searching anonymous members and base classes like gdb.
    std::optional<value> find_member(const value& obj, const type& s, const std::string& name) {
        for (auto& m : s.members()) {
            if (m.name == name && !m.is_base_class) {
                if (m.is_static) {
                    if (auto v = ctx_.lookup_variable(s.tag_name() + "::" + name)) {
                        return v;
                    }
                    error::send("field " + name + " is nonexistent or has been optimized out");
                }
                return detail::member_value(obj, m);
            }
        }
        for (auto& m : s.members()) {
            if (m.name.empty() || m.is_base_class) {
                auto sub_t = m.get_type().strip_cv_typedef();
                if (!is_struct(sub_t)) {
                    continue;
                }
                value sub = detail::component(obj, m.get_type(), m.byte_offset);
                if (auto found = find_member(sub, sub_t, name)) {
                    return found;
                }
            }
        }
        return std::nullopt;
    }

    value member_access(const expression& e) {
        bool arrow = e.k == expression::kind::arrow;
        value obj = lvalue_of(*e.kids[0]);
        // gdb follows pointers for both `.` and `->`.
        for (int guard = 0; guard < 8; ++guard) {
            auto s = obj.val_type.strip_cv_typedef();
            if (s.kind() != type_kind::pointer) {
                break;
            }
            fetch(obj, ctx_);
            obj = detail::deref_reference(detail::lvalue_at(s.target().value_or(type()), raw_bits(obj)), ctx_);
        }
        auto s = obj.val_type.strip_cv_typedef();
        if (arrow && is_struct(s)) {
            // `owned->x` of a smart pointer: its operator-> (a gdb xmethod).
            if (auto p = detail::libstdcxx_pointee(obj, s, ctx_)) {
                obj = *p;
                s = obj.val_type.strip_cv_typedef();
            }
        }
        if (!is_struct(s)) {
            error::send(arrow ? "Attempt to extract a component of a value that is not a structure pointer."
                              : "Attempt to extract a component of a value that is not a structure.");
        }
        auto m = find_member(obj, s, e.text);
        if (!m) {
            error::send("There is no member named " + e.text + ".");
        }
        return *m;
    }

    value index(const expression& e) {
        value base = detail::deref_reference(eval(*e.kids[0]), ctx_);
        value idx = rv(*e.kids[1]);
        auto s = base.val_type.strip_cv_typedef();
        if (s.kind() == type_kind::array) {
            if (!detail::is_integral(idx.val_type)) {
                not_a_number();
            }
            auto elem = s.target().value_or(type());
            std::int64_t i = to_int(idx);
            auto esz = elem.size();
            if (base.address) {
                return detail::lvalue_at(elem, *base.address + static_cast<std::uint64_t>(i) * esz);
            }
            auto n = s.array_counts().empty() ? 0 : s.array_counts().front();
            if (i < 0 || static_cast<std::uint64_t>(i) >= n) {
                error::send("no such vector element");
            }
            fetch(base, ctx_);
            return detail::component(base, elem, static_cast<std::uint64_t>(i) * esz);
        }
        if (s.kind() == type_kind::pointer) {
            fetch(base, ctx_);
            if (!detail::is_integral(idx.val_type)) {
                not_a_number();
            }
            auto target = s.target().value_or(type());
            if (target.is_void()) {
                error::send("Attempt to dereference a generic pointer.");
            }
            return detail::lvalue_at(target, raw_bits(base) + static_cast<std::uint64_t>(to_int(idx)) *
                                                                  element_size(base.val_type));
        }
        if (is_struct(s) && detail::is_integral(idx.val_type)) {
            if (auto el = detail::libstdcxx_subscript(base, s, to_int(idx), ctx_)) {
                return *el;
            }
        }
        error::send("cannot subscript something of type `" + base.val_type.name() + "'");
    }

    eval_context& ctx_;
};

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

value evaluate(const expression& e, eval_context& ctx) {
    evaluator ev(ctx);
    value v = ev.eval(e);
    auto k = v.val_type.strip_cv_typedef().kind();
    if (k != type_kind::function && k != type_kind::void_) {
        fetch(v, ctx);
    }
    return v;
}

value evaluate_lazy(const expression& e, eval_context& ctx) {
    evaluator ev(ctx);
    return ev.eval(e);
}

value evaluate(std::string_view text, eval_context& ctx) {
    auto e = parse_expression(text, &ctx);
    return evaluate(*e, ctx);
}

bool is_true(const value& v) {
    auto s = v.val_type.strip_cv_typedef();
    if (detail::is_floating(s)) {
        return detail::to_float(v) != 0;
    }
    if (detail::is_integral(s) || s.kind() == type_kind::pointer) {
        return raw_bits(v) != 0;
    }
    error::send("Attempt to use a non-scalar value as a condition.");
}

std::int64_t as_integer(const value& v) {
    auto s = v.val_type.strip_cv_typedef();
    if (detail::is_integral(s) || s.kind() == type_kind::pointer ||
        s.kind() == type_kind::reference || s.kind() == type_kind::rvalue_reference) {
        return to_int(v);
    }
    if (detail::is_floating(s)) {
        return static_cast<std::int64_t>(detail::float_to_bits(detail::to_float(v)));
    }
    if (s.kind() == type_kind::array && v.address) {
        return static_cast<std::int64_t>(*v.address);
    }
    if (s.kind() == type_kind::function && v.address) {
        return static_cast<std::int64_t>(*v.address);
    }
    error::send("Value can't be converted to integer.");
}

std::optional<type> parse_type(std::string_view text, eval_context& ctx) {
    auto ts = parse_type_spec(text, &ctx);
    if (!ts) {
        return std::nullopt;
    }
    return resolve_type_spec(*ts, ctx);
}

}  // namespace ompdbg::dwarf
