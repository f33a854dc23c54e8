// The children of a type's DIE: the members of a struct/class/union (offsets, bitfields,
// access), the enumerators of an enum and the parameters of a function type.

#include "ompdbg/dwarf/type.hpp"

#include "internal/type_die.hpp"

#include <dwarf.h>

namespace ompdbg::dwarf {
namespace {

// DW_AT_data_member_location: a constant, or (DWARF 2) an expression such as
// DW_OP_plus_uconst N.
std::uint64_t member_location(Dwarf_Die& die) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&die, DW_AT_data_member_location, &attr) == nullptr) {
        return 0;
    }
    switch (dwarf_whatform(&attr)) {
        case DW_FORM_block:
        case DW_FORM_block1:
        case DW_FORM_block2:
        case DW_FORM_block4:
        case DW_FORM_exprloc: {
            Dwarf_Op* ops = nullptr;
            size_t nops = 0;
            if (dwarf_getlocation(&attr, &ops, &nops) != 0) {
                return 0;
            }
            std::uint64_t acc = 0;
            for (size_t i = 0; i < nops; ++i) {
                if (ops[i].atom == DW_OP_plus_uconst || ops[i].atom == DW_OP_constu) {
                    acc += ops[i].number;
                }
            }
            return acc;
        }
        default: {
            Dwarf_Word v = 0;
            dwarf_formudata(&attr, &v);
            return v;
        }
    }
}

}  // namespace

using detail::die_name;
using detail::flag;
using detail::type_attr;
using detail::udata;

std::vector<member> type::members() const {
    std::vector<member> out;
    type s = strip_cv_typedef();
    if (s.syn_) {
        for (const auto& f : s.syn_->fields) {
            member m{};
            m.name = f.name;
            m.byte_offset = f.byte_offset;
            m.synthetic = std::make_shared<const type>(f.field_type);
            out.push_back(std::move(m));
        }
        return out;
    }
    if (!s.has_die_) {
        return out;
    }
    auto k = s.kind();
    if (k != type_kind::structure && k != type_kind::class_ && k != type_kind::union_) {
        return out;
    }
    Dwarf_Die child;
    if (dwarf_child(&s.die_, &child) != 0) {
        return out;
    }
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_member && tag != DW_TAG_inheritance && tag != DW_TAG_variable) {
            continue;
        }
        member m;
        m.name = die_name(child);
        m.is_base_class = tag == DW_TAG_inheritance;
        auto t = type_attr(child);
        m.type_die = t;
        Dwarf_Attribute attr;
        bool has_location = dwarf_attr_integrate(&child, DW_AT_data_member_location, &attr) ||
                            dwarf_attr_integrate(&child, DW_AT_data_bit_offset, &attr);
        m.is_static = tag == DW_TAG_variable ||
                      (!has_location && k != type_kind::union_ &&
                       (flag(child, DW_AT_external) || flag(child, DW_AT_declaration)));
        m.byte_offset = member_location(child);
        m.is_artificial = flag(child, DW_AT_artificial);
        m.accessibility = static_cast<std::uint8_t>(
            udata(child, DW_AT_accessibility)
                .value_or(k == type_kind::class_ ? DW_ACCESS_private : DW_ACCESS_public));
        if (auto bs = udata(child, DW_AT_bit_size)) {
            m.bit_size = static_cast<std::uint32_t>(*bs);
            std::uint64_t bit_pos = m.byte_offset * 8;
            if (auto dbo = udata(child, DW_AT_data_bit_offset)) {
                bit_pos += *dbo;
            } else if (auto obo = udata(child, DW_AT_bit_offset)) {
                // DWARF 2/3: bits from the most significant bit of a storage unit of
                // DW_AT_byte_size bytes; convert to a little-endian position from the LSB.
                std::uint64_t unit = udata(child, DW_AT_byte_size)
                                         .value_or(t ? type(*t).size() : 4);
                bit_pos += unit * 8 - *obo - *bs;
            }
            m.byte_offset = bit_pos / 8;
            m.bit_offset = static_cast<std::uint32_t>(bit_pos % 8);
        }
        out.push_back(std::move(m));
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

std::vector<enumerator> type::enumerators() const {
    std::vector<enumerator> out;
    type s = strip_cv_typedef();
    if (!s.has_die_ || s.kind() != type_kind::enumeration) {
        return out;
    }
    bool signed_underlying = false;
    // gdb spells the enumerators of a C++ `enum class` with the enum's qualified name.
    std::string prefix = flag(s.die_, DW_AT_enum_class) ? s.tag_name() + "::" : "";
    if (auto u = type_attr(s.die_)) {
        auto e = type(*u).encoding();
        signed_underlying = e == base_encoding::signed_int || e == base_encoding::signed_char;
    }
    Dwarf_Die child;
    if (dwarf_child(&s.die_, &child) != 0) {
        return out;
    }
    do {
        if (dwarf_tag(&child) != DW_TAG_enumerator) {
            continue;
        }
        Dwarf_Attribute attr;
        if (dwarf_attr(&child, DW_AT_const_value, &attr) == nullptr) {
            continue;
        }
        std::int64_t v = 0;
        unsigned form = dwarf_whatform(&attr);
        if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
            Dwarf_Sword sv = 0;
            dwarf_formsdata(&attr, &sv);
            v = sv;
        } else {
            Dwarf_Word uv = 0;
            dwarf_formudata(&attr, &uv);
            int bits = form == DW_FORM_data1 ? 8 : form == DW_FORM_data2 ? 16
                       : form == DW_FORM_data4 ? 32 : 64;
            if (signed_underlying && bits < 64 && (uv >> (bits - 1)) & 1) {
                uv |= ~((Dwarf_Word{1} << bits) - 1);
            }
            v = static_cast<std::int64_t>(uv);
        }
        out.push_back({prefix + die_name(child), v});
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

std::vector<type> type::parameters() const {
    std::vector<type> out;
    type s = strip_cv_typedef();
    if (s.syn_) {
        return s.syn_->params;
    }
    if (!s.has_die_ || s.kind() != type_kind::function) {
        return out;
    }
    Dwarf_Die child;
    if (dwarf_child(&s.die_, &child) != 0) {
        return out;
    }
    do {
        if (dwarf_tag(&child) == DW_TAG_formal_parameter) {
            auto t = type_attr(child);
            out.push_back(t ? type(*t) : type());
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

bool type::is_varargs() const {
    type s = strip_cv_typedef();
    if (s.syn_) {
        return s.syn_->varargs;
    }
    if (!s.has_die_ || s.kind() != type_kind::function) {
        return false;
    }
    Dwarf_Die child;
    if (dwarf_child(&s.die_, &child) != 0) {
        return false;
    }
    do {
        if (dwarf_tag(&child) == DW_TAG_unspecified_parameters) {
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool type::is_prototyped() const {
    type s = strip_cv_typedef();
    if (s.syn_) {
        return s.syn_->prototyped;
    }
    if (!s.has_die_) {
        return true;
    }
    return s.is_cplus() || flag(s.die_, DW_AT_prototyped);
}

}  // namespace ompdbg::dwarf
