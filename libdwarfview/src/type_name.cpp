// Type names as gdb spells them: C declarators built inside out, qualified C++ names, and
// GCC's base type names in their short spelling.

#include "ompdbg/dwarf/type.hpp"

#include "internal/type_die.hpp"
#include "internal/type_print.hpp"

#include <dwarf.h>

#include <limits>
#include <string_view>

namespace ompdbg::dwarf {
namespace {

using detail::die_name;

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

}  // namespace

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

}  // namespace ompdbg::dwarf
