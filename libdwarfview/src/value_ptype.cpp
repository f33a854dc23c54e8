// ptype / whatis text as gdb 13 prints it (c-typeprint.c): struct bodies with one member
// a line, anonymous aggregates expanded in place, C++ access labels, base classes and
// methods, enums with " = N" only where the value breaks the sequence.

#include <dwarf.h>

#include <string>

#include "internal/expr_ast.hpp"
#include "internal/type_print.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::dwarf {
namespace {

std::string indent(int level) { return std::string(static_cast<std::size_t>(level) * 4, ' '); }

const char* access_name(int a) {
    return a == DW_ACCESS_private ? "private" : a == DW_ACCESS_protected ? "protected" : "public";
}

bool die_flag(Dwarf_Die die, unsigned name) {
    Dwarf_Attribute attr;
    bool v = false;
    return dwarf_attr_integrate(&die, name, &attr) && dwarf_formflag(&attr, &v) == 0 && v;
}

std::optional<type> die_type(Dwarf_Die die) {
    Dwarf_Attribute attr;
    Dwarf_Die t;
    if (dwarf_attr_integrate(&die, DW_AT_type, &attr) && dwarf_formref_die(&attr, &t)) {
        return type(t);
    }
    return std::nullopt;
}

int die_access(Dwarf_Die die, bool is_class) {
    Dwarf_Attribute attr;
    Dwarf_Word v = 0;
    if (dwarf_attr(&die, DW_AT_accessibility, &attr) && dwarf_formudata(&attr, &v) == 0) {
        return static_cast<int>(v);
    }
    return is_class ? DW_ACCESS_private : DW_ACCESS_public;
}

struct method {
    std::string text;
    int access;
};

// Non-artificial member functions as gdb lists them: "int get(void) const",
// "static int f(int)", "virtual int f(int)", constructors without a return type.
std::vector<method> methods(const type& s) {
    std::vector<method> out;
    const Dwarf_Die* d = s.die();
    if (!d) {
        return out;
    }
    Dwarf_Die parent = *d;
    Dwarf_Die child;
    if (dwarf_child(&parent, &child) != 0) {
        return out;
    }
    std::string simple = s.tag_name();
    if (auto p = simple.rfind("::"); p != std::string::npos) {
        simple = simple.substr(p + 2);
    }
    bool is_class = s.kind() == type_kind::class_;
    do {
        if (dwarf_tag(&child) != DW_TAG_subprogram || die_flag(child, DW_AT_artificial)) {
            continue;
        }
        const char* n = dwarf_diename(&child);
        if (!n) {
            continue;
        }
        std::string name = n;
        std::vector<std::string> params;
        bool has_this = false;
        bool is_const = false;
        Dwarf_Die p;
        if (dwarf_child(&child, &p) == 0) {
            do {
                if (dwarf_tag(&p) != DW_TAG_formal_parameter) {
                    continue;
                }
                auto pt = die_type(p);
                if (die_flag(p, DW_AT_artificial)) {
                    has_this = true;
                    if (pt && pt->kind() == type_kind::pointer) {
                        auto target = pt->target().value_or(type());
                        is_const = target.kind() == type_kind::const_;
                    }
                    continue;
                }
                params.push_back(pt ? pt->name() : "void");
            } while (dwarf_siblingof(&p, &p) == 0);
        }
        std::string text;
        bool is_ctor = name == simple || (!name.empty() && name[0] == '~');
        Dwarf_Attribute va;
        bool is_virtual = dwarf_attr(&child, DW_AT_virtuality, &va) != nullptr && name[0] != '~';
        if (!has_this) {
            text += "static ";
        } else if (is_virtual) {
            text += "virtual ";
        }
        if (!is_ctor) {
            auto rt = die_type(child);
            text += (rt ? rt->name() : std::string("void")) + " ";
        }
        text += name + "(";
        if (params.empty()) {
            text += "void";
        }
        for (std::size_t i = 0; i < params.size(); ++i) {
            text += (i ? ", " : "") + params[i];
        }
        text += ")";
        if (is_const) {
            text += " const";
        }
        out.push_back({text, die_access(child, is_class)});
    } while (dwarf_siblingof(&child, &child) == 0);
    return out;
}

std::string body(const type& t, int level);

// Member declarations print named types by name and expand anonymous ones in place.
detail::print_style member_style(int level) {
    detail::print_style st;
    st.leaf = [level](const type& leaf) -> std::optional<std::string> {
        if (leaf.tag_name().empty()) {
            return body(leaf, level);
        }
        return std::nullopt;
    };
    return st;
}

std::string enum_body(const type& t) {
    std::string out = "enum ";
    const Dwarf_Die* d = t.die();
    bool is_enum_class = d && die_flag(*d, DW_AT_enum_class);
    if (is_enum_class) {
        out += "class ";
    }
    std::string tag = t.tag_name();
    if (!tag.empty()) {
        out += tag + " ";
    }
    if (t.is_cplus() && d) {
        if (auto u = die_type(*d)) {
            out += ": " + u->name() + " ";
        }
    }
    out += "{";
    std::int64_t expected = 0;
    bool first = true;
    for (auto& e : t.enumerators()) {
        if (!first) {
            out += ", ";
        }
        first = false;
        out += e.name;
        if (e.value != expected) {
            out += " = " + std::to_string(e.value);
        }
        expected = e.value + 1;
    }
    return out + "}";
}

// "struct point {\n    int x;\n}" at nesting `level` (the closing brace is indented by it).
std::string body(const type& t, int level) {
    auto s = t.strip_cv_typedef();
    if (s.kind() == type_kind::enumeration) {
        return enum_body(s);
    }
    bool is_class = s.kind() == type_kind::class_;
    std::string out = s.kind() == type_kind::union_ ? "union" : is_class ? "class" : "struct";
    std::string tag = s.tag_name();
    if (!tag.empty()) {
        out += " " + tag;
    }
    auto members = s.members();
    std::string bases;
    for (auto& m : members) {
        if (m.is_base_class) {
            bases += bases.empty() ? " : " : ", ";
            bases += std::string(access_name(m.accessibility)) + " " + m.get_type().name();
        }
    }
    out += bases + " {\n";
    if (s.is_declaration()) {
        return out.substr(0, out.size() - 3) + " {\n" + indent(level + 1) + "<incomplete type>\n" +
               indent(level) + "}";
    }
    auto fns = methods(s);
    // gdb's need_access_label_p: a class whose members are all private, or a struct whose
    // members are all public, needs no labels.
    bool need_labels = false;
    for (auto& m : members) {
        if (m.is_base_class) {
            continue;
        }
        if (is_class ? m.accessibility != DW_ACCESS_private : m.accessibility != DW_ACCESS_public) {
            need_labels = true;
        }
    }
    for (auto& f : fns) {
        if (is_class ? f.access != DW_ACCESS_private : f.access != DW_ACCESS_public) {
            need_labels = true;
        }
    }
    int section = 0;
    auto label = [&](int access) {
        if (access != section) {
            out += indent(level) + "  " + access_name(access) + ":\n";
            section = access;
        }
    };
    bool any = false;
    auto style = member_style(level + 1);
    for (auto& m : members) {
        if (m.is_base_class || m.is_artificial || (m.name.empty() && m.bit_size)) {
            continue;
        }
        any = true;
        if (need_labels) {
            label(m.accessibility);
        }
        out += indent(level + 1);
        if (m.is_static) {
            out += "static ";
        }
        out += detail::declarator_text(m.get_type(), m.name, &style);
        if (m.bit_size) {
            out += " : " + std::to_string(*m.bit_size);
        }
        out += ";\n";
    }
    if (!any && fns.empty()) {
        out += indent(level + 1) + "<no data fields>\n";
    }
    if (!fns.empty() && section != 0) {
        out += "\n";
    }
    for (auto& f : fns) {
        label(f.access);
        out += indent(level + 1) + f.text + ";\n";
    }
    return out + indent(level) + "}";
}

}  // namespace

std::string whatis_text(const type& t) { return "type = " + t.name(); }

std::string ptype_text(const type& t) {
    if (is_nodebug_function(t)) {
        return "type = <unknown return type> ()";
    }
    detail::print_style st;
    st.resolve_typedefs = true;
    st.leaf = [](const type& leaf) -> std::optional<std::string> { return body(leaf, 0); };
    return "type = " + detail::declarator_text(t, "", &st);
}

namespace {

// gdb's whatis/ptype argument: a type name, or an expression (whose value is not read
// beyond what its type needs).
// gdb evaluates the operand of ptype/whatis for its type only (EVAL_AVOID_SIDE_EFFECTS):
// a call is not made (its value is its return type's, zero; also without a process), an
// assignment or increment writes nothing. Reads still read: `ptype *p` needs p.
class type_only_context : public eval_context {
public:
    explicit type_only_context(eval_context& real) : real_(real) {}
    std::optional<value> lookup_variable(std::string_view n) override { return real_.lookup_variable(n); }
    std::optional<value> lookup_function(std::string_view n) override { return real_.lookup_function(n); }
    std::optional<type> lookup_type(std::string_view n) override { return real_.lookup_type(n); }
    std::optional<std::uint64_t> read_register(std::string_view n) override { return real_.read_register(n); }
    void write_register(std::string_view, std::uint64_t) override {}
    void read_memory(std::uint64_t addr, std::span<std::byte> out) override { real_.read_memory(addr, out); }
    void write_memory(std::uint64_t, std::span<const std::byte>) override {}
    std::optional<std::uint64_t> read_dwarf_register(int r) override { return real_.read_dwarf_register(r); }
    std::string symbolize(std::uint64_t addr) override { return real_.symbolize(addr); }
    std::optional<value> history(int i) override { return real_.history(i); }
    int history_size() override { return real_.history_size(); }
    std::optional<value> lookup_enumerator(std::string_view n) override { return real_.lookup_enumerator(n); }
    std::optional<value> convenience(std::string_view n) override { return real_.convenience(n); }
    void set_convenience(std::string_view, const value&) override {}
    void write_dwarf_register(int, std::uint64_t) override {}
    bool language_cplus() override { return real_.language_cplus(); }
    void warn(std::string_view) override {}
    std::vector<value> lookup_functions(std::string_view n) override { return real_.lookup_functions(n); }
    void check_can_call() override {}
    value call_function(const function_call& call) override {
        value v;
        v.val_type = call.return_type;
        v.bytes.resize(call.return_type.size());
        return v;
    }
    std::uint64_t push_to_target(std::span<const std::byte>) override { return 0; }

private:
    eval_context& real_;
};

std::pair<type, bool> type_of_argument(std::string_view text, eval_context& real) {
    type_only_context ctx(real);
    if (auto t = parse_type(text, ctx)) {
        return {*t, true};
    }
    auto e = parse_expression(text, &ctx);
    value v = evaluate_lazy(*e, ctx);
    return {v.val_type, false};
}

}  // namespace

std::string whatis_command(std::string_view text, eval_context& ctx) {
    auto [t, is_type_name] = type_of_argument(text, ctx);
    // On a typedef name, whatis unrolls exactly one level.
    if (is_type_name && t.kind() == type_kind::typedef_) {
        return whatis_text(t.target().value_or(type()));
    }
    return whatis_text(t);
}

std::string ptype_command(std::string_view text, eval_context& ctx) {
    return ptype_text(type_of_argument(text, ctx).first);
}

}  // namespace ompdbg::dwarf
