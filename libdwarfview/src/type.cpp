#include "ompdbg/dwarf/type.hpp"

#include "internal/type_print.hpp"

#include <dwarf.h>

#include <limits>
#include <string_view>

namespace ompdbg::dwarf {
namespace {

bool is_cplus_lang(int lang) {
    switch (lang) {
        case DW_LANG_C_plus_plus:
        case DW_LANG_C_plus_plus_03:
        case DW_LANG_C_plus_plus_11:
        case DW_LANG_C_plus_plus_14:
            return true;
        default:
            return false;
    }
}

bool die_is_cplus(const Dwarf_Die& die) {
    Dwarf_Die cu;
    Dwarf_Die copy = die;
    if (dwarf_diecu(&copy, &cu, nullptr, nullptr) == nullptr) {
        return false;
    }
    return is_cplus_lang(dwarf_srclang(&cu));
}

std::optional<Dwarf_Die> type_attr(const Dwarf_Die& die) {
    Dwarf_Die copy = die;
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(&copy, DW_AT_type, &attr) == nullptr) {
        return std::nullopt;
    }
    Dwarf_Die out;
    if (dwarf_formref_die(&attr, &out) == nullptr) {
        return std::nullopt;
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

// The DIEs that enclose `die` (namespaces, classes), outermost first. libdw has no parent
// links; DIE children are contiguous in .debug_info, so a walk down the sibling chains
// that only enters the subtree whose offset range contains the target is enough.
std::vector<Dwarf_Die> ancestors(const Dwarf_Die& die) {
    std::vector<Dwarf_Die> chain;
    Dwarf_Die copy = die;
    Dwarf_Off target = dwarf_dieoffset(&copy);
    Dwarf_Die cur;
    if (dwarf_diecu(&copy, &cur, nullptr, nullptr) == nullptr) {
        return chain;
    }
    for (;;) {
        Dwarf_Die child;
        if (dwarf_child(&cur, &child) != 0) {
            return {};
        }
        bool descended = false;
        for (;;) {
            Dwarf_Off off = dwarf_dieoffset(&child);
            if (off == target) {
                return chain;
            }
            Dwarf_Die sib;
            int r = dwarf_siblingof(&child, &sib);
            Dwarf_Off end = r == 0 ? dwarf_dieoffset(&sib) : std::numeric_limits<Dwarf_Off>::max();
            if (off < target && target < end) {
                chain.push_back(child);
                cur = child;
                descended = true;
                break;
            }
            if (r != 0) {
                break;
            }
            child = sib;
        }
        if (!descended) {
            return {};
        }
    }
}

// "ns::klass::" for C++ DIEs nested in namespaces/classes; gdb's qualified spelling.
std::string scope_prefix(const Dwarf_Die& die) {
    std::string out;
    for (auto& a : ancestors(die)) {
        int tag = dwarf_tag(&a);
        if (tag == DW_TAG_namespace) {
            std::string n = die_name(a);
            out += (n.empty() ? "(anonymous namespace)" : n) + "::";
        } else if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
                   tag == DW_TAG_union_type) {
            std::string n = die_name(a);
            if (!n.empty()) {
                out += n + "::";
            }
        } else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block) {
            // Types local to a function are printed unqualified by gdb.
            out.clear();
        }
    }
    return out;
}

// gdb prints GCC's base type names in their short C spelling.
std::string normalize_base_name(std::string n) {
    static const std::pair<std::string_view, std::string_view> table[] = {
        {"short int", "short"},
        {"short unsigned int", "unsigned short"},
        {"long int", "long"},
        {"long unsigned int", "unsigned long"},
        {"long long int", "long long"},
        {"long long unsigned int", "unsigned long long"},
        {"__int128 unsigned", "unsigned __int128"},
    };
    for (auto& [from, to] : table) {
        if (n == from) {
            return std::string(to);
        }
    }
    return n;
}

std::string sp(const std::string& inner) { return inner.empty() ? "" : " " + inner; }

std::string join_quals(const std::string& a, const std::string& b) {
    if (a.empty()) {
        return b;
    }
    if (b.empty()) {
        return a;
    }
    return a + " " + b;
}

// A C declarator, built inside out the way gdb's c_print_type does: `inner` is what
// already wraps the name position ("*", "(*)[3]"), `quals` the cv-qualifiers pending
// for `t` itself.
std::string declarator(const type& t, const std::string& inner, const std::string& quals,
                       const detail::print_style* style = nullptr);

std::string params_text(const type& fn) {
    std::string out = "(";
    auto params = fn.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (i) {
            out += ", ";
        }
        out += params[i].name();
    }
    if (fn.is_varargs()) {
        out += params.empty() ? "..." : ", ...";
    } else if (params.empty() && fn.is_prototyped()) {
        out += "void";
    }
    return out + ")";
}

// Corrupt DWARF can make a type refer to itself (a pointer to itself): bound the depth.
thread_local int declarator_depth = 0;

std::string declarator(const type& t, const std::string& inner, const std::string& quals,
                       const detail::print_style* style) {
    struct guard {
        guard() { ++declarator_depth; }
        ~guard() { --declarator_depth; }
    } g;
    if (declarator_depth > 200) {
        return "<cyclic type>";
    }
    switch (t.kind()) {
        case type_kind::typedef_:
            if (style && style->resolve_typedefs) {
                return declarator(t.target().value_or(type()), inner, quals, style);
            }
            break;
        case type_kind::const_:
        case type_kind::volatile_:
        case type_kind::restrict_: {
            const char* q = t.kind() == type_kind::const_      ? "const"
                            : t.kind() == type_kind::volatile_ ? "volatile"
                                                               : "restrict";
            auto target = t.target().value_or(type());
            return declarator(target, inner, join_quals(quals, q), style);
        }
        case type_kind::pointer:
        case type_kind::reference:
        case type_kind::rvalue_reference: {
            const char* sym = t.kind() == type_kind::pointer     ? "*"
                              : t.kind() == type_kind::reference ? "&"
                                                                 : "&&";
            std::string s = quals.empty() ? sym + inner : std::string(sym) + " " + quals + sp(inner);
            auto target = t.target().value_or(type());
            auto tk = target.kind();
            if (tk == type_kind::array || tk == type_kind::function) {
                s = "(" + s + ")";
            }
            return declarator(target, s, "", style);
        }
        case type_kind::ptr_to_member: {
            auto target = t.target().value_or(type());
            std::string cls;
            if (auto* d = t.die()) {
                Dwarf_Die copy = *d;
                Dwarf_Attribute attr;
                Dwarf_Die cd;
                if (dwarf_attr(&copy, DW_AT_containing_type, &attr) &&
                    dwarf_formref_die(&attr, &cd)) {
                    cls = type(cd).name();
                }
            }
            std::string s = cls + "::*" + (quals.empty() ? "" : " " + quals) + sp(inner);
            if (target.kind() == type_kind::function) {
                s = "(" + s + ")";
            }
            return declarator(target, s, "", style);
        }
        case type_kind::array: {
            std::string dims;
            for (auto c : t.array_counts()) {
                dims += c ? "[" + std::to_string(c) + "]" : "[]";
            }
            // Multi-dimensional DIE arrays: target() is already the inner array, whose
            // dims we have printed; use the innermost element.
            type elem = t;
            while (elem.kind() == type_kind::array) {
                auto counts = elem.array_counts();
                auto next = elem.target().value_or(type());
                for (std::size_t i = 1; i < counts.size() && next.kind() == type_kind::array; ++i) {
                    next = next.target().value_or(type());
                }
                elem = next;
                if (elem.kind() == type_kind::array) {
                    for (auto c : elem.array_counts()) {
                        dims += c ? "[" + std::to_string(c) + "]" : "[]";
                    }
                }
            }
            return declarator(elem, inner + dims, quals, style);
        }
        case type_kind::function: {
            auto ret = t.target().value_or(type());
            return declarator(ret, inner + params_text(t), "", style);
        }
        default:
            break;
    }
    // A named type: qualifiers go in front ("const char *").
    std::string base;
    switch (t.kind()) {
        case type_kind::void_:
            base = "void";
            break;
        case type_kind::structure:
        case type_kind::class_:
        case type_kind::union_:
        case type_kind::enumeration: {
            if (style && style->leaf) {
                if (auto text = style->leaf(t)) {
                    base = *text;
                    break;
                }
            }
            std::string tag = t.tag_name();
            const char* kw = t.kind() == type_kind::union_         ? "union"
                             : t.kind() == type_kind::enumeration ? "enum"
                             : t.kind() == type_kind::class_      ? "class"
                                                                  : "struct";
            if (tag.empty()) {
                base = std::string(t.kind() == type_kind::class_ ? "class" : kw) + " {...}";
            } else if (t.is_cplus()) {
                base = tag;
            } else {
                base = std::string(kw) + " " + tag;
            }
            break;
        }
        case type_kind::base:
            if (t.is_synthetic()) {
                base = t.tag_name();
            } else {
                base = normalize_base_name(die_name(*t.die()));
            }
            break;
        default:
            base = t.tag_name();
            if (base.empty()) {
                base = "<unknown type>";
            }
            break;
    }
    return (quals.empty() ? "" : quals + " ") + base + sp(inner);
}

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

std::optional<std::uint64_t> udata(Dwarf_Die& die, unsigned name) {
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (dwarf_attr_integrate(&die, name, &attr) == nullptr || dwarf_formudata(&attr, &v) != 0) {
        return std::nullopt;
    }
    return v;
}

}  // namespace

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

std::string type::name() const { return declarator(*this, "", ""); }

namespace detail {
std::string declarator_text(const type& t, const std::string& inner, const print_style* style) {
    return declarator(t, inner, "", style);
}
}  // namespace detail

std::string type::tag_name() const {
    if (syn_) {
        bool named = syn_->kind == type_kind::base || syn_->kind == type_kind::structure ||
                     syn_->kind == type_kind::union_;
        return named ? syn_->name : "";
    }
    if (!has_die_) {
        return "void";
    }
    std::string n = die_name(die_);
    if (n.empty()) {
        return n;
    }
    if (is_cplus()) {
        return scope_prefix(die_) + n;
    }
    return n;
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
        if (t) {
            m.type_die = *t;
        }
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
