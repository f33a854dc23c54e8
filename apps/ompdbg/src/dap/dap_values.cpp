#include "dap/dap_values.hpp"

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app::dap {

namespace {

constexpr std::size_t max_children = 1000;

/// The type a value's children come from: typedefs, cv and references stripped.
dwarf::type shape_of(const dwarf::type& t) {
    dwarf::type s = t.strip_cv_typedef();
    if (s.kind() == dwarf::type_kind::reference || s.kind() == dwarf::type_kind::rvalue_reference) {
        if (auto target = s.target()) {
            s = target->strip_cv_typedef();
        }
    }
    return s;
}

bool is_record(const dwarf::type& t) {
    auto k = t.kind();
    return k == dwarf::type_kind::structure || k == dwarf::type_kind::class_ || k == dwarf::type_kind::union_;
}

/// std::string prints as its text; its members are the library's internals.
bool is_std_string(const dwarf::type& t) {
    for (const std::string& n : {t.tag_name(), t.name()}) {
        if (n.rfind("std::__cxx11::basic_string<", 0) == 0 || n.rfind("std::basic_string<", 0) == 0 ||
            n == "std::string" || n == "std::__cxx11::string") {
            return true;
        }
    }
    return false;
}

bool is_std_vector(const dwarf::type& t) {
    return t.tag_name().rfind("std::vector<", 0) == 0 || t.name().rfind("std::vector<", 0) == 0;
}

/// What kind of children a value of type `t` has.
enum class children_kind { none, members, elements, pointee, vector };

children_kind children_of(const dwarf::type& raw) {
    dwarf::type t = shape_of(raw);
    if (is_record(t)) {
        if (is_std_string(t)) {
            return children_kind::none;
        }
        return is_std_vector(t) ? children_kind::vector : children_kind::members;
    }
    if (t.kind() == dwarf::type_kind::array) {
        auto counts = t.array_counts();
        return !counts.empty() && counts.front() > 0 ? children_kind::elements : children_kind::none;
    }
    if (t.kind() == dwarf::type_kind::pointer) {
        if (auto target = t.target(); target && is_record(target->strip_cv_typedef())) {
            return children_kind::pointee;
        }
    }
    return children_kind::none;
}

std::string type_name(const dwarf::value& v) {
    return v.synthetic_type_name.empty() ? v.val_type.name() : v.synthetic_type_name;
}

}  // namespace

frame_context context_of(adapter& a, const frame_ref& f) {
    a.select(f);
    session& s = a.model();
    const auto& stack = s.stack(f.tid);
    if (f.level < 0 || static_cast<std::size_t>(f.level) >= stack.size()) {
        error::send("That frame is gone.");
    }
    return frame_context(s, f.tid, stack[static_cast<std::size_t>(f.level)]);
}

nlohmann::json variable_json(adapter& a, const frame_ref& f, const std::string& name, const std::string& expression) {
    nlohmann::json out{{"name", name}, {"evaluateName", expression}, {"variablesReference", 0}};
    try {
        frame_context ctx = context_of(a, f);
        dwarf::value v = dwarf::evaluate(expression, ctx);
        out["type"] = type_name(v);
        out["value"] = dwarf::format_value(v, ctx);
        if (children_of(v.val_type) != children_kind::none) {
            out["variablesReference"] = a.variables_reference({variable_ref::kind::children, f, expression});
        }
    } catch (const std::exception& e) {
        out["value"] = std::string("<error: ") + e.what() + ">";
    }
    return out;
}

std::vector<nlohmann::json> child_variables(adapter& a, const frame_ref& f, const std::string& expression) {
    std::vector<nlohmann::json> out;
    dwarf::type t;
    {
        frame_context ctx = context_of(a, f);
        t = dwarf::evaluate(expression, ctx).val_type;
    }
    std::string e = "(" + expression + ")";
    switch (children_of(t)) {
    case children_kind::members:
        for (const auto& m : shape_of(t).members()) {
            if (m.is_static || m.name.empty()) {
                continue;   // base classes and anonymous members: not listed yet
            }
            if (m.is_base_class) {
                continue;
            }
            out.push_back(variable_json(a, f, m.name, e + "." + m.name));
        }
        break;
    case children_kind::elements: {
        std::uint64_t n = std::min<std::uint64_t>(shape_of(t).array_counts().front(), max_children);
        for (std::uint64_t i = 0; i < n; ++i) {
            out.push_back(variable_json(a, f, fmt::format("[{}]", i), fmt::format("{}[{}]", e, i)));
        }
        break;
    }
    case children_kind::pointee:
        out.push_back(variable_json(a, f, "*" + expression, "*" + e));
        break;
    case children_kind::vector: {
        // libstdc++'s layout: the elements run from _M_start to _M_finish.
        std::string start = e + "._M_impl._M_start";
        std::int64_t n = 0;
        try {
            frame_context ctx = context_of(a, f);
            n = dwarf::as_integer(dwarf::evaluate(e + "._M_impl._M_finish - " + start, ctx));
        } catch (const std::exception&) {
            n = 0;
        }
        n = std::clamp<std::int64_t>(n, 0, static_cast<std::int64_t>(max_children));
        for (std::int64_t i = 0; i < n; ++i) {
            out.push_back(variable_json(a, f, fmt::format("[{}]", i), fmt::format("{}[{}]", start, i)));
        }
        break;
    }
    case children_kind::none:
        break;
    }
    return out;
}

}  // namespace ompdbg::app::dap
