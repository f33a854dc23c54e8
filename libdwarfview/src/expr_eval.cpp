// The evaluator: C semantics over an eval_context, with gdb 13's error messages. This file
// dispatches on the expression's kind and resolves names, `$` history, registers and
// convenience variables; operators, lvalues and casts have files of their own.

#include <cstring>
#include <string>

#include "internal/expr_ast.hpp"
#include "internal/expr_call.hpp"
#include "internal/expr_evaluator.hpp"
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
using detail::raw_bits;
using detail::to_int;

}  // namespace

namespace detail {

std::optional<type> register_type(std::string_view name, bool cplus) {
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

value evaluator::eval(const expression& e) {
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
value evaluator::rv(const expression& e) {
    value v = detail::deref_reference(eval(e), ctx_);
    fetch(v, ctx_);
    return v;
}

value evaluator::call(const expression& e, const std::optional<type>& forced_return) {
    detail::call_hooks hooks{
        [this](const expression& x) { return eval(x); },
        [this](const expression& x) { return rv(x); },
        [this](const value& v, const type& t) { return cast(v, t); },
    };
    return detail::evaluate_call(e, ctx_, hooks, forced_return);
}

value evaluator::identifier(const std::string& raw) {
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

value evaluator::history(int index) {
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

value evaluator::dollar(const std::string& name) {
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
value evaluator::coerce(value v) {
    auto s = v.val_type.strip_cv_typedef();
    if (s.kind() == type_kind::array) {
        if (!v.address) {
            error::send("Attempt to take address of value not located in memory.");
        }
        return make_int(type::pointer_to(s.target().value_or(type())), *v.address);
    }
    // A function known only by its ELF symbol decays too: `square+7` is an address, gdb's
    // `(<text variable, no debug info> *) 0x1140 <square+7>` (the type's size is 1).
    if (s.kind() == type_kind::function || is_nodebug_function(v.val_type)) {
        return make_int(type::pointer_to(v.val_type), v.address.value_or(0));
    }
    return v;
}

value evaluator::lvalue_of(const expression& e) { return detail::deref_reference(eval(e), ctx_); }

}  // namespace detail

value evaluate(const expression& e, eval_context& ctx) {
    detail::evaluator ev(ctx);
    value v = ev.eval(e);
    auto k = v.val_type.strip_cv_typedef().kind();
    if (k != type_kind::function && k != type_kind::void_) {
        fetch(v, ctx);
    }
    return v;
}

value evaluate_lazy(const expression& e, eval_context& ctx) {
    detail::evaluator ev(ctx);
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

}  // namespace ompdbg::dwarf
