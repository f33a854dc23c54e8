// Calls in expressions, as gdb 13's evaluate_funcall / call_function_by_hand prepare them:
// the callee (a function, a function pointer, an address, a method of an object, one of a
// set of overloads), its arguments converted to the parameter types (or promoted, for
// variadic and unprototyped ones), then the eval_context runs it.

#include "internal/expr_call.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/call_abi.hpp"

namespace ompdbg::dwarf {

std::vector<value> eval_context::lookup_functions(std::string_view name) {
    std::vector<value> out;
    if (auto v = lookup_function(name)) {
        out.push_back(*v);
    }
    return out;
}

void eval_context::check_can_call() { error::send("You can't do that without a process to debug."); }

value eval_context::call_function(const function_call& call) {
    (void)call;
    check_can_call();
    error::send("You can't do that without a process to debug.");
}

std::uint64_t eval_context::push_to_target(std::span<const std::byte> bytes) {
    (void)bytes;
    error::send("You can't do that without a process to debug.");
}

namespace detail {

namespace {

constexpr const char* no_debug_info = "<text variable, no debug info>";

bool is_struct_kind(type_kind k) {
    return k == type_kind::structure || k == type_kind::class_ || k == type_kind::union_;
}

// True when the subprogram DIE's first parameter is the compiler's `this`.
bool has_this_parameter(const type& fn) {
    const Dwarf_Die* die = fn.die();
    if (die == nullptr) {
        return false;
    }
    Dwarf_Die d = *die;
    Dwarf_Die child;
    if (dwarf_child(&d, &child) != 0) {
        return false;
    }
    do {
        if (dwarf_tag(&child) == DW_TAG_formal_parameter) {
            Dwarf_Attribute a;
            bool flag = false;
            return dwarf_attr_integrate(&child, DW_AT_artificial, &a) != nullptr && dwarf_formflag(&a, &flag) == 0 &&
                   flag;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

// True when class `s` declares a member function `name` (a declaration that may have no
// out-of-line definition: gdb's "may be inlined").
bool declares_method(const type& s, const std::string& name) {
    const Dwarf_Die* die = s.die();
    if (die == nullptr) {
        return false;
    }
    Dwarf_Die d = *die;
    Dwarf_Die child;
    if (dwarf_child(&d, &child) != 0) {
        return false;
    }
    do {
        if (dwarf_tag(&child) == DW_TAG_subprogram) {
            const char* n = dwarf_diename(&child);
            if (n != nullptr && name == n) {
                return true;
            }
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

class call_builder {
public:
    call_builder(eval_context& ctx, const call_hooks& hooks) : ctx_(ctx), hooks_(hooks) {}

    value run(const expression& e, const std::optional<type>& forced) {
        const expression& callee = *e.kids[0];
        std::vector<value> args;
        for (std::size_t i = 1; i < e.kids.size(); ++i) {
            args.push_back(hooks_.rv(*e.kids[i]));
        }
        if (callee.k == expression::kind::member || callee.k == expression::kind::arrow) {
            return method(callee, std::move(args), forced);
        }
        if (callee.k == expression::kind::identifier) {
            std::string name = callee.text.rfind("::", 0) == 0 ? callee.text.substr(2) : callee.text;
            if (!ctx_.lookup_variable(name)) {
                auto cands = ctx_.lookup_functions(name);
                if (cands.size() > 1) {
                    auto best = best_overload(cands, args, 0);
                    if (!best) {
                        error::send("Cannot resolve function " + name + " to any overloaded instance");
                    }
                    return call(*best, name, std::move(args), std::nullopt, forced);
                }
                if (cands.empty()) {
                    refuse_declared_only(name);
                } else {
                    // The one candidate may be a minimal symbol only the function lookup
                    // knows (a PLT stub before `run`).
                    return call(cands.front(), name, std::move(args), std::nullopt, forced);
                }
            }
            value fn = hooks_.eval(callee);
            return call(fn, name, std::move(args), std::nullopt, forced);
        }
        return call(hooks_.eval(callee), "", std::move(args), std::nullopt, forced);
    }

private:
    // `obj.name(args)`: a libstdc++ xmethod when the printers know the layout, else the
    // class's member function called with `this`.
    value method(const expression& callee, std::vector<value> args, const std::optional<type>& forced) {
        value obj = deref_reference(hooks_.eval(*callee.kids[0]), ctx_);
        for (int guard = 0; guard < 8; ++guard) {
            type s = obj.val_type.strip_cv_typedef();
            if (s.kind() != type_kind::pointer) {
                break;
            }
            fetch(obj, ctx_);
            obj = deref_reference(lvalue_at(s.target().value_or(type()), raw_bits(obj)), ctx_);
        }
        type s = obj.val_type.strip_cv_typedef();
        if (!is_struct_kind(s.kind())) {
            error::send(callee.k == expression::kind::arrow
                            ? "Attempt to extract a component of a value that is not a structure pointer."
                            : "Attempt to extract a component of a value that is not a structure.");
        }
        if (auto r = libstdcxx_method(obj, s, callee.text, args, ctx_)) {
            return *r;
        }
        std::string qualified = s.tag_name() + "::" + callee.text;
        auto cands = ctx_.lookup_functions(qualified);
        if (cands.empty() && !declares_method(s, callee.text)) {
            // A method of a base class: called with `this` pointing at that base.
            if (auto found = in_base(s, callee.text, obj.address ? *obj.address : 0)) {
                qualified = found->qualified;
                cands = std::move(found->cands);
                if (!obj.address) {
                    found->address += push_bytes(obj);   // the object copied into the program
                }
                obj = lvalue_at(found->klass, found->address);
                s = found->klass;
            }
        }
        if (cands.empty()) {
            if (declares_method(s, callee.text)) {
                error::send("Cannot evaluate function -- may be inlined");
            }
            error::send("Couldn't find method " + qualified);
        }
        auto best = best_overload(cands, args, 1);
        if (!best) {
            error::send("Cannot resolve method " + qualified + " to any overloaded instance");
        }
        std::optional<value> self;
        if (has_this_parameter(best->val_type)) {
            std::uint64_t addr = obj.address ? *obj.address : push_bytes(obj);
            self = make_int(type::pointer_to(obj.val_type), addr);
        }
        return call(*best, qualified, std::move(args), self, forced);
    }

    struct base_method {
        std::string qualified;
        std::vector<value> cands;
        type klass;
        std::uint64_t address;
    };

    // The definitions of method `name` in the non-virtual bases of class `s` (an object at
    // `address`), depth first as gdb's lookup finds the first.
    std::optional<base_method> in_base(const type& s, const std::string& name, std::uint64_t address, int depth = 0) {
        if (depth > 16) {
            return std::nullopt;
        }
        for (const auto& m : s.members()) {
            if (!m.is_base_class) {
                continue;
            }
            type b = m.get_type().strip_cv_typedef();
            std::uint64_t at = address + m.byte_offset;
            std::string qualified = b.tag_name() + "::" + name;
            auto cands = ctx_.lookup_functions(qualified);
            if (!cands.empty()) {
                return base_method{qualified, std::move(cands), b, at};
            }
            if (auto deeper = in_base(b, name, at, depth + 1)) {
                return deeper;
            }
        }
        return std::nullopt;
    }

    // `klass::name(...)` of a member function declared in the class but never emitted
    // out of line: gdb's "may be inlined" rather than "No symbol".
    void refuse_declared_only(const std::string& name) {
        std::size_t sep = name.rfind("::");
        if (sep == std::string::npos) {
            return;
        }
        auto klass = ctx_.lookup_type(name.substr(0, sep));
        if (klass && is_struct_kind(klass->strip_cv_typedef().kind()) &&
            declares_method(klass->strip_cv_typedef(), name.substr(sep + 2))) {
            error::send("Cannot evaluate function -- may be inlined");
        }
    }

    std::uint64_t push_bytes(value v) {
        fetch(v, ctx_);
        return ctx_.push_to_target(v.bytes);
    }

    // How well argument `a` fits parameter `p`: 3 same type, 2 same kind and size, 1
    // convertible, 0 not.
    static int fit(const type& p, const value& a) {
        type ps = p.strip_cv_typedef();
        type as = a.val_type.strip_cv_typedef();
        if (ps.kind() == type_kind::reference || ps.kind() == type_kind::rvalue_reference) {
            ps = ps.target().value_or(type()).strip_cv_typedef();
        }
        if (ps.name() == as.name()) {
            return 3;
        }
        bool pf = is_floating(ps);
        bool af = is_floating(as);
        if ((is_integral(ps) && is_integral(as)) || (pf && af)) {
            return ps.size() == as.size() ? 2 : 1;
        }
        if (ps.kind() == type_kind::pointer && (as.kind() == type_kind::pointer || as.kind() == type_kind::array)) {
            return 1;
        }
        if ((is_integral(ps) || pf) && (is_integral(as) || af)) {
            return 1;
        }
        return 0;
    }

    // gdb's overload resolution, simplified: the candidate whose parameters take the
    // arguments best (`skip` leading parameters are `this`).
    std::optional<value> best_overload(const std::vector<value>& cands, const std::vector<value>& args,
                                       std::size_t skip) {
        std::optional<value> best;
        int best_score = -1;
        for (const value& c : cands) {
            auto params = c.val_type.strip_cv_typedef().parameters();
            std::size_t own = skip != 0 && has_this_parameter(c.val_type) ? 1 : 0;
            std::size_t n = params.size() >= own ? params.size() - own : 0;
            bool varargs = c.val_type.strip_cv_typedef().is_varargs();
            if (args.size() < n || (args.size() > n && !varargs)) {
                continue;
            }
            int score = 1;
            for (std::size_t i = 0; i < n; ++i) {
                int f = fit(params[i + own], args[i]);
                if (f == 0) {
                    score = -1;
                    break;
                }
                score += f;
            }
            if (score > best_score) {
                best_score = score;
                best = c;
            }
        }
        if (best) {
            return best;
        }
        // None fits. A free function alone is called anyway (C does not check extra
        // arguments); a candidate wanting more arguments reports "Too few arguments".
        if (skip == 0 && cands.size() == 1) {
            return cands.front();
        }
        for (const value& c : cands) {
            std::size_t own = skip != 0 && has_this_parameter(c.val_type) ? 1 : 0;
            if (c.val_type.strip_cv_typedef().parameters().size() > args.size() + own) {
                return c;
            }
        }
        return std::nullopt;
    }

    // The argument as the callee receives it for parameter type `p`.
    value convert(const type& p, value a) {
        type ps = p.strip_cv_typedef();
        if (ps.kind() == type_kind::reference || ps.kind() == type_kind::rvalue_reference) {
            std::uint64_t addr = a.address ? *a.address : push_bytes(a);
            value out = make_int(type::pointer_to(ps.target().value_or(type())), addr);
            return out;
        }
        if (is_struct_kind(ps.kind())) {
            if (!is_struct_kind(a.val_type.strip_cv_typedef().kind())) {
                error::send("Cannot convert value to struct " + ps.name() + ".");
            }
            if (is_passed_by_reference(ps)) {
                return copy_for_call(p, std::move(a));
            }
            fetch(a, ctx_);
            a.val_type = p;
            a.address.reset();
            return a;
        }
        if (is_integral(ps) && ps.size() == 16) {
            return widen_to_128(p, std::move(a));
        }
        return hooks_.cast(decay(std::move(a)), p);
    }

    // An integer argument for an __int128 parameter: its bytes sign- or zero-extended to
    // sixteen (the evaluator's casts compute in 64 bits and would drop the high half).
    value widen_to_128(const type& p, value a) {
        a = decay(std::move(a));
        fetch(a, ctx_);
        type as = a.val_type.strip_cv_typedef();
        if (!is_integral(as) || a.bit_size) {
            return hooks_.cast(a, p);
        }
        std::size_t n = std::min<std::size_t>(a.bytes.size(), 16);
        bool negative = is_signed(as) && n > 0 && (std::to_integer<unsigned>(a.bytes[n - 1]) & 0x80U) != 0;
        std::vector<std::byte> wide(16, negative ? std::byte{0xff} : std::byte{0});
        std::copy_n(a.bytes.begin(), n, wide.begin());
        a.bytes = std::move(wide);
        a.val_type = p;
        a.address.reset();
        return a;
    }

    // Arrays to pointers (a string literal is copied into the program first), functions to
    // function pointers.
    value decay(value a) {
        type s = a.val_type.strip_cv_typedef();
        if (s.kind() == type_kind::array) {
            std::uint64_t addr = a.address ? *a.address : push_bytes(a);
            return make_int(type::pointer_to(s.target().value_or(type())), addr);
        }
        if (s.kind() == type_kind::function) {
            return make_int(type::pointer_to(a.val_type), a.address.value_or(0));
        }
        return a;
    }

    // The default argument promotions (variadic and unprototyped parameters).
    value promote(value a) {
        a = decay(std::move(a));
        type s = a.val_type.strip_cv_typedef();
        if (is_floating(s) && s.size() < 8) {
            return hooks_.cast(a, double_type());
        }
        if (is_integral(s) && s.size() < 4) {
            return hooks_.cast(a, int_type());
        }
        fetch(a, ctx_);
        a.address.reset();
        return a;
    }

    std::string name_of(std::uint64_t addr, const std::string& given) {
        if (!given.empty()) {
            return given;
        }
        std::string sym = ctx_.symbolize(addr);
        if (sym.size() > 2 && sym.front() == '<' && sym.back() == '>' && sym.find('+') == std::string::npos) {
            return sym.substr(1, sym.size() - 2);
        }
        // gdb's own spelling, its hex_string already carrying "0x".
        return fmt::format("at 0x0x{:x}", addr);
    }

    value call(value fn, const std::string& given_name, std::vector<value> args, std::optional<value> self,
               const std::optional<type>& forced) {
        ctx_.check_can_call();   // gdb refuses before it looks at the callee or the arguments
        fn = deref_reference(fn, ctx_);
        type s = fn.val_type.strip_cv_typedef();
        function_call c;
        type ftype;
        bool known = true;
        if (fn.synthetic_type_name == no_debug_info || s.name() == no_debug_info) {
            c.address = fn.address.value_or(0);
            known = false;
        } else if (s.kind() == type_kind::function) {
            c.address = fn.address.value_or(0);
            ftype = s;
        } else if (s.kind() == type_kind::pointer && s.target() &&
                   s.target()->strip_cv_typedef().kind() == type_kind::function) {
            fetch(fn, ctx_);
            c.address = raw_bits(fn);
            ftype = s.target()->strip_cv_typedef();
        } else if (is_integral(s)) {
            fetch(fn, ctx_);
            c.address = raw_bits(fn);
            c.name = fmt::format("at 0x0x{:x}", c.address);
            known = false;
        } else {
            error::send("Invalid data type for function to be called.");
        }
        if (c.name.empty()) {
            c.name = name_of(c.address, given_name);
        }
        if (!known && !forced) {
            error::send("'" + c.name + "' has unknown return type; cast the call to its declared return type");
        }
        std::vector<type> params;
        bool prototyped = false;
        if (known) {
            params = ftype.parameters();
            prototyped = ftype.is_prototyped();
            c.is_variadic = ftype.is_varargs() || !prototyped;
            c.return_type = ftype.target().value_or(type());
            // A declaration whose return type DWARF does not say (ld.so's strlen): gdb
            // treats it as a function without debug info.
            if (c.return_type.kind() == type_kind::unknown && !forced) {
                error::send("'" + c.name + "' has unknown return type; cast the call to its declared return type");
            }
        } else {
            c.is_variadic = true;
        }
        if (forced) {
            c.return_type = *forced;
        }
        if (self) {
            args.insert(args.begin(), *self);
        }
        if (args.size() < params.size()) {
            error::send("Too few arguments in function call.");
        }
        const std::size_t own_copies = copies_.size();
        for (std::size_t i = 0; i < args.size(); ++i) {
            value a = i < params.size() && prototyped ? convert(params[i], std::move(args[i])) : promote(std::move(args[i]));
            fetch(a, ctx_);
            c.args.push_back(std::move(a));
        }
        value result = ctx_.call_function(c);
        // The copies made for by-reference class arguments die after the call, as the
        // caller's temporaries do (gdb calls their destructors the same way).
        std::vector<class_copy> made(copies_.begin() + static_cast<long>(own_copies), copies_.end());
        copies_.resize(own_copies);
        for (const class_copy& copy : made) {
            destroy(copy);
        }
        return result;
    }

    /// A copy of a class argument made in the program for a call (Itanium ABI: passed by
    /// invisible reference), destroyed after it.
    struct class_copy {
        type klass;
        std::uint64_t address;
    };

    // The member functions `klass::name` whose one parameter after `this` is `klass` by
    // reference (the copy constructor), or that take none but `this` (the destructor).
    std::optional<value> special_member(const type& klass, const std::string& name, bool copy) {
        for (const value& c : ctx_.lookup_functions(klass.tag_name() + "::" + name)) {
            auto params = c.val_type.strip_cv_typedef().parameters();
            std::size_t own = has_this_parameter(c.val_type) ? 1 : 0;
            if (!copy && params.size() == own) {
                return c;
            }
            if (copy && params.size() == own + 1) {
                type pt = params[own].strip_cv_typedef();
                if ((pt.kind() == type_kind::reference || pt.kind() == type_kind::rvalue_reference) && pt.target() &&
                    pt.target()->strip_cv_typedef().tag_name() == klass.tag_name()) {
                    return c;
                }
            }
        }
        return std::nullopt;
    }

    static std::string unqualified(const std::string& tag) {
        std::size_t sep = tag.rfind("::");
        return sep == std::string::npos ? tag : tag.substr(sep + 2);
    }

    // gdb's by-reference class argument: a copy on the stack made by the class's copy
    // constructor (bitwise when it has none out of line), its address passed instead.
    value copy_for_call(const type& p, value a) {
        type ps = p.strip_cv_typedef();
        fetch(a, ctx_);
        std::uint64_t original = a.address ? *a.address : ctx_.push_to_target(a.bytes);
        std::uint64_t copy = ctx_.push_to_target(a.bytes);
        std::string ctor_name = unqualified(ps.tag_name());
        if (auto ctor = special_member(ps, ctor_name, true)) {
            call(*ctor, ps.tag_name() + "::" + ctor_name, {lvalue_at(p, original)}, make_int(type::pointer_to(p), copy),
                 std::nullopt);
        }
        copies_.push_back({ps, copy});
        return make_int(type::pointer_to(p), copy);
    }

    void destroy(const class_copy& c) {
        std::string dtor_name = "~" + unqualified(c.klass.tag_name());
        if (auto dtor = special_member(c.klass, dtor_name, false)) {
            call(*dtor, c.klass.tag_name() + "::" + dtor_name, {}, make_int(type::pointer_to(c.klass), c.address),
                 std::nullopt);
        }
    }

    eval_context& ctx_;
    const call_hooks& hooks_;
    std::vector<class_copy> copies_;
};

}  // namespace

value evaluate_call(const expression& e, eval_context& ctx, const call_hooks& hooks,
                    const std::optional<type>& forced_return) {
    return call_builder(ctx, hooks).run(e, forced_return);
}

}  // namespace detail

}  // namespace ompdbg::dwarf
