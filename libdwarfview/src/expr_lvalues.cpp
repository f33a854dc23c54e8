// The evaluator's lvalues: assignment (bitfields, registers, convenience variables), member
// access through `.` and `->`, and subscripts of arrays, pointers and libstdc++ containers.

#include <cstring>
#include <string>

#include "internal/expr_evaluator.hpp"
#include "internal/std_printers.hpp"
#include "internal/value_util.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf::detail {

// The bits of `nv` (of the field's declared type) a `w`-bit field stores, as gdb 13's
// modify_field: a negative value that fits loses its sign extension; one that does not
// fit is truncated with gdb's warning.
std::uint64_t evaluator::bitfield_bits(const value& nv, unsigned w, std::uint64_t field_mask) {
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
value evaluator::store(const value& target, const value& v) {
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

value evaluator::assign(const expression& e) {
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

// Finds `name` in a struct, searching anonymous members and base classes like gdb.
std::optional<value> evaluator::find_member(const value& obj, const type& s,
                                            const std::string& name) {
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

value evaluator::member_access(const expression& e) {
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

value evaluator::index(const expression& e) {
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

}  // namespace ompdbg::dwarf::detail
