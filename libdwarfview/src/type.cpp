// A type as a view of its DIE (or of a synthetic type): the constructors of synthetic types,
// kind, size, cv/typedef stripping, targets, array bounds, encoding and the predicates.
// Names are spelled in type_name.cpp; members, enumerators and parameters in type_members.cpp.

#include "ompdbg/dwarf/type.hpp"
#include "ompdbg/dwarf/language.hpp"

#include "internal/leb128.hpp"
#include "internal/type_die.hpp"
#include "ompdbg/base/error.hpp"

#include <fmt/format.h>

#include <dwarf.h>

#include <cstring>
#include <limits>

namespace ompdbg::dwarf {
namespace {

std::vector<std::uint64_t> subrange_counts(const Dwarf_Die& die) {
    std::vector<std::uint64_t> out;
    Dwarf_Die copy = die;
    Dwarf_Die child;
    if (dwarf_child(&copy, &child) != 0) {
        return out;
    }
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_subrange_type && tag != DW_TAG_enumeration_type) {
            continue;
        }
        Dwarf_Attribute attr;
        Dwarf_Word v = 0;
        if (dwarf_attr_integrate(&child, DW_AT_count, &attr) && dwarf_formudata(&attr, &v) == 0) {
            out.push_back(v);
        } else if (dwarf_attr_integrate(&child, DW_AT_upper_bound, &attr) &&
                   dwarf_formudata(&attr, &v) == 0) {
            Dwarf_Word lower = 0;
            Dwarf_Attribute lattr;
            if (dwarf_attr_integrate(&child, DW_AT_lower_bound, &lattr)) {
                dwarf_formudata(&lattr, &lower);
            }
            // An upper bound of -1 (flexible array member, `int a[]`) is an unknown bound.
            bool minus_one = v == std::numeric_limits<Dwarf_Word>::max() ||
                             (dwarf_whatform(&attr) == DW_FORM_data4 && v == 0xffffffffu) ||
                             (dwarf_whatform(&attr) == DW_FORM_data1 && v == 0xffu) ||
                             (dwarf_whatform(&attr) == DW_FORM_data2 && v == 0xffffu);
            out.push_back(minus_one ? 0 : v + 1 - lower);
        } else {
            out.push_back(0);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

}  // namespace

bool die_is_cplus(const Dwarf_Die& die) {
    Dwarf_Die cu;
    Dwarf_Die copy = die;
    if (dwarf_diecu(&copy, &cu, nullptr, nullptr) == nullptr) {
        return false;
    }
    switch (dwarf_srclang(&cu)) {
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14:
        return true;
    default:
        return false;
    }
}

namespace detail {

// The .debug_info offset a reference names (a unit-relative form plus its unit's start),
// for the message about a reference that leads nowhere. libdw has already measured the
// attribute's value, so its bytes are inside the section.
std::uint64_t referenced_offset(const Dwarf_Attribute& attr) {
    std::uint64_t value = 0;
    switch (attr.form) {
        case DW_FORM_ref1: value = attr.valp[0]; break;
        case DW_FORM_ref2: std::memcpy(&value, attr.valp, 2); break;
        case DW_FORM_ref4: std::memcpy(&value, attr.valp, 4); break;
        case DW_FORM_ref8: std::memcpy(&value, attr.valp, 8); break;
        case DW_FORM_ref_udata: {
            const unsigned char* p = attr.valp;
            internal::read_uleb(p, p + 10, value);
            break;
        }
        case DW_FORM_ref_addr: std::memcpy(&value, attr.valp, 4); return value;   // section offset
        default: return value;
    }
    Dwarf_Die unit;
    if (attr.cu != nullptr &&
        dwarf_cu_die(attr.cu, &unit, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) != nullptr) {
        value += dwarf_dieoffset(&unit) - dwarf_cuoffset(&unit);
    }
    return value;
}

// No DW_AT_type is void (nullopt); a DW_AT_type that libdw cannot follow (corrupt DWARF:
// an offset outside the unit or the section) is an error, as in gdb, never a DIE we make up.
std::optional<Dwarf_Die> type_attr(const Dwarf_Die& die) {
    Dwarf_Die copy = die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&copy, DW_AT_type, &attr) == nullptr) {
        return std::nullopt;
    }
    Dwarf_Die out;
    if (dwarf_formref_die(&attr, &out) == nullptr) {
        error::send(fmt::format("invalid dwarf2 offset {:#x}", referenced_offset(attr)));
    }
    return out;
}

bool flag(const Dwarf_Die& die, unsigned name) {
    Dwarf_Die copy = die;
    Dwarf_Attribute attr;
    bool v = false;
    if (dwarf_attr_integrate(&copy, name, &attr) == nullptr) {
        return false;
    }
    return dwarf_formflag(&attr, &v) == 0 && v;
}

std::string die_name(const Dwarf_Die& die) {
    Dwarf_Die copy = die;
    const char* n = dwarf_diename(&copy);
    return n ? n : "";
}

std::optional<std::uint64_t> udata(Dwarf_Die& die, unsigned name) {
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (dwarf_attr_integrate(&die, name, &attr) == nullptr || dwarf_formudata(&attr, &v) != 0) {
        return std::nullopt;
    }
    return v;
}

}  // namespace detail

using detail::die_name;
using detail::flag;
using detail::type_attr;
using detail::udata;

type type::make_base(std::string name, std::uint64_t size, base_encoding enc) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::base;
    s->name = std::move(name);
    s->size = size;
    s->enc = enc;
    type t;
    t.syn_ = std::move(s);
    return t;
}

namespace {
constexpr const char* nodebug_name = "<text variable, no debug info>";
}  // namespace

type nodebug_function_type() { return type::make_base(nodebug_name, 1, base_encoding::other); }

bool is_nodebug_function(const type& t) {
    return t.kind() == type_kind::base && t.die() == nullptr && t.name() == nodebug_name;
}

type type::pointer_to(const type& target) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::pointer;
    s->size = 8;
    s->target = target;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::reference_to(const type& target) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::reference;
    s->size = 8;
    s->target = target;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::array_of(const type& elem, std::uint64_t count) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::array;
    s->size = elem.size() * count;
    s->target = elem;
    s->count = count;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::const_of(const type& target) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::const_;
    s->target = target;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::volatile_of(const type& target) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::volatile_;
    s->target = target;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::function_of(const type& ret, std::vector<type> params, bool varargs, bool prototyped) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = type_kind::function;
    s->target = ret;
    s->params = std::move(params);
    s->varargs = varargs;
    s->prototyped = prototyped;
    type t;
    t.syn_ = std::move(s);
    return t;
}

type type::record_of(type_kind kind, std::string tag, std::uint64_t size, std::vector<synthetic_field> fields) {
    auto s = std::make_shared<synthetic_type>();
    s->kind = kind;
    s->name = std::move(tag);
    s->size = size;
    s->fields = std::move(fields);
    type t;
    t.syn_ = std::move(s);
    return t;
}

type_kind type::kind() const {
    if (syn_) {
        return syn_->kind;
    }
    if (!has_die_) {
        return type_kind::void_;
    }
    Dwarf_Die copy = die_;
    switch (dwarf_tag(&copy)) {
        case DW_TAG_base_type:
            return type_kind::base;
        case DW_TAG_pointer_type:
            return type_kind::pointer;
        case DW_TAG_reference_type:
            return type_kind::reference;
        case DW_TAG_rvalue_reference_type:
            return type_kind::rvalue_reference;
        case DW_TAG_structure_type:
            return type_kind::structure;
        case DW_TAG_class_type:
            return type_kind::class_;
        case DW_TAG_union_type:
            return type_kind::union_;
        case DW_TAG_enumeration_type:
            return type_kind::enumeration;
        case DW_TAG_array_type:
            return type_kind::array;
        case DW_TAG_typedef:
            return type_kind::typedef_;
        case DW_TAG_const_type:
            return type_kind::const_;
        case DW_TAG_volatile_type:
            return type_kind::volatile_;
        case DW_TAG_restrict_type:
            return type_kind::restrict_;
        case DW_TAG_subroutine_type:
        case DW_TAG_subprogram:
            return type_kind::function;
        case DW_TAG_ptr_to_member_type:
            return type_kind::ptr_to_member;
        case DW_TAG_unspecified_type:
            return die_name(die_) == "void" ? type_kind::void_ : type_kind::unknown;
        default:
            return type_kind::unknown;
    }
}

std::uint64_t type::size() const {
    if (syn_) {
        if (syn_->kind == type_kind::array) {
            return syn_->target.size() * syn_->count;
        }
        if (syn_->kind == type_kind::const_ || syn_->kind == type_kind::volatile_) {
            return syn_->target.size();
        }
        return syn_->size;
    }
    if (!has_die_) {
        return 0;
    }
    auto k = kind();
    if (k == type_kind::function || k == type_kind::void_) {
        return 0;
    }
    if (k == type_kind::typedef_ || k == type_kind::const_ || k == type_kind::volatile_ ||
        k == type_kind::restrict_) {
        return strip_cv_typedef().size();
    }
    if (k == type_kind::array) {
        // Compute from the element so that multi-dimensional and typedef'd elements agree
        // with target() (dwarf_aggregate_size needs DW_AT_byte_size on every element).
        std::uint64_t n = 1;
        for (auto c : array_counts()) {
            n *= c;
        }
        Dwarf_Die copy = die_;
        if (auto bs = udata(copy, DW_AT_byte_size)) {
            return *bs;
        }
        auto elem = type_attr(die_);
        return elem ? n * type(*elem).size() : 0;
    }
    Dwarf_Die copy = die_;
    Dwarf_Word sz = 0;
    if (dwarf_aggregate_size(&copy, &sz) == 0) {
        return sz;
    }
    if (k == type_kind::pointer || k == type_kind::reference ||
        k == type_kind::rvalue_reference || k == type_kind::ptr_to_member) {
        return 8;
    }
    if (k == type_kind::enumeration) {
        if (auto u = type_attr(die_)) {
            return type(*u).size();
        }
        return 4;
    }
    return 0;
}

type type::strip_cv_typedef() const {
    type t = *this;
    for (int guard = 0; guard < 64; ++guard) {
        auto k = t.kind();
        if (k != type_kind::typedef_ && k != type_kind::const_ && k != type_kind::volatile_ &&
            k != type_kind::restrict_) {
            return t;
        }
        t = t.target().value_or(type());
    }
    return t;
}

std::optional<type> type::target() const {
    if (syn_) {
        if (syn_->kind == type_kind::base) {
            return std::nullopt;
        }
        return syn_->target;
    }
    if (!has_die_) {
        return std::nullopt;
    }
    auto k = kind();
    if (k == type_kind::array) {
        auto counts = array_counts();
        auto elem = type_attr(die_);
        type e = elem ? type(*elem) : type();
        if (counts.size() <= 1) {
            return e;
        }
        // int [2][3]: the element of the outer dimension is int [3].
        type inner = e;
        for (std::size_t i = counts.size(); i-- > 1;) {
            inner = array_of(inner, counts[i]);
        }
        return inner;
    }
    auto t = type_attr(die_);
    if (t) {
        return type(*t);
    }
    switch (k) {
        case type_kind::pointer:
        case type_kind::reference:
        case type_kind::rvalue_reference:
        case type_kind::typedef_:
        case type_kind::const_:
        case type_kind::volatile_:
        case type_kind::restrict_:
        case type_kind::function:
        case type_kind::ptr_to_member:
            return type();  // void
        default:
            return std::nullopt;
    }
}

std::vector<std::uint64_t> type::array_counts() const {
    if (syn_) {
        if (syn_->kind == type_kind::array) {
            return {syn_->count};
        }
        return {};
    }
    if (!has_die_ || kind() != type_kind::array) {
        return {};
    }
    return subrange_counts(die_);
}

base_encoding type::encoding() const {
    type s = strip_cv_typedef();
    if (s.syn_) {
        if (s.syn_->kind == type_kind::pointer) {
            return base_encoding::unsigned_int;
        }
        return s.syn_->enc;
    }
    if (!s.has_die_) {
        return base_encoding::other;
    }
    switch (s.kind()) {
        case type_kind::base: {
            auto enc = udata(s.die_, DW_AT_encoding).value_or(0);
            switch (enc) {
                case DW_ATE_signed:
                    return base_encoding::signed_int;
                case DW_ATE_unsigned:
                    return base_encoding::unsigned_int;
                case DW_ATE_signed_char:
                    return base_encoding::signed_char;
                case DW_ATE_unsigned_char:
                    return base_encoding::unsigned_char;
                case DW_ATE_boolean:
                    return base_encoding::boolean;
                case DW_ATE_float:
                    return base_encoding::floating;
                case DW_ATE_UTF:
                    return base_encoding::unsigned_int;
                default:
                    return base_encoding::other;
            }
        }
        case type_kind::enumeration: {
            for (auto& e : s.enumerators()) {
                if (e.value < 0) {
                    return base_encoding::signed_int;
                }
            }
            return base_encoding::unsigned_int;
        }
        case type_kind::pointer:
        case type_kind::reference:
        case type_kind::rvalue_reference:
            return base_encoding::unsigned_int;
        default:
            return base_encoding::other;
    }
}

bool type::is_char() const {
    type s = strip_cv_typedef();
    if (s.kind() != type_kind::base || s.size() != 1) {
        return false;
    }
    auto e = s.encoding();
    if (e == base_encoding::unsigned_int && !s.is_synthetic()) {
        // char8_t (DW_ATE_UTF, one byte) prints like char.
        Dwarf_Die d = *s.die();
        return udata(d, DW_AT_encoding).value_or(0) == DW_ATE_UTF;
    }
    return e == base_encoding::signed_char || e == base_encoding::unsigned_char;
}

bool type::is_pointer_like() const {
    auto k = strip_cv_typedef().kind();
    return k == type_kind::pointer || k == type_kind::reference ||
           k == type_kind::rvalue_reference;
}

bool type::is_aggregate() const {
    auto k = strip_cv_typedef().kind();
    return k == type_kind::structure || k == type_kind::class_ || k == type_kind::union_ ||
           k == type_kind::array;
}

bool type::is_declaration() const {
    type s = strip_cv_typedef();
    return s.has_die_ && flag(s.die_, DW_AT_declaration);
}

bool type::is_const() const { return kind() == type_kind::const_; }

bool type::is_cplus() const {
    if (syn_) {
        return syn_->kind != type_kind::base && syn_->target.is_cplus();
    }
    return has_die_ && die_is_cplus(die_);
}

bool type::operator==(const type& other) const {
    if (syn_ || other.syn_) {
        if (!syn_ || !other.syn_) {
            return false;
        }
        return kind() == other.kind() && name() == other.name();
    }
    if (has_die_ != other.has_die_) {
        return false;
    }
    if (!has_die_) {
        return true;
    }
    Dwarf_Die a = die_;
    Dwarf_Die b = other.die_;
    return dwarf_cu_getdwarf(a.cu) == dwarf_cu_getdwarf(b.cu) &&
           dwarf_dieoffset(&a) == dwarf_dieoffset(&b);
}

}  // namespace ompdbg::dwarf
