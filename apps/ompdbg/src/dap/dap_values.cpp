#include "dap/dap_values.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value_children.hpp"

namespace ompdbg::app::dap {

namespace {

constexpr std::size_t max_children = 1000;

std::string type_name(const dwarf::value& v) {
    return v.synthetic_type_name.empty() ? v.val_type.name() : v.synthetic_type_name;
}

/// Whether `v` opens in the view (one child read to know).
bool has_children(const dwarf::value& v, frame_context& ctx) {
    try {
        return !dwarf::value_children(v, ctx, 1).empty();
    } catch (const std::exception&) {
        return false;
    }
}

/// The value `ref` stands for: its expression evaluated, then its path followed.
dwarf::value value_at(const variable_ref& ref, frame_context& ctx) {
    dwarf::value v = dwarf::evaluate(ref.expression, ctx);
    for (std::size_t index : ref.path) {
        auto kids = dwarf::value_children(v, ctx, index + 1);
        if (index >= kids.size()) {
            error::send("That part of " + ref.expression + " is gone.");
        }
        v = kids[index].val;
    }
    return v;
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
        if (has_children(v, ctx)) {
            out["variablesReference"] = a.variables_reference({variable_ref::kind::children, f, expression, {}});
        }
    } catch (const std::exception& e) {
        out["value"] = std::string("<error: ") + e.what() + ">";
    }
    return out;
}

std::vector<nlohmann::json> child_variables(adapter& a, const variable_ref& parent) {
    std::vector<nlohmann::json> out;
    frame_context ctx = context_of(a, parent.frame);
    dwarf::value v = value_at(parent, ctx);
    auto kids = dwarf::value_children(v, ctx, max_children);
    for (std::size_t i = 0; i < kids.size(); ++i) {
        const auto& kid = kids[i];
        // A part named by an expression is opened by it; the others by their path.
        variable_ref ref{variable_ref::kind::children, parent.frame, parent.expression, parent.path};
        std::string name = kid.name;
        if (kid.reachable && parent.path.empty()) {
            ref.expression = kid.expression_of(parent.expression);
            ref.path.clear();
            if (name == "*") {
                name = "*" + parent.expression;
            }
        } else {
            ref.path.push_back(i);
        }
        nlohmann::json item{{"name", name}, {"variablesReference", 0}};
        if (ref.path.empty()) {
            item["evaluateName"] = ref.expression;
        }
        try {
            item["type"] = type_name(kid.val);
            item["value"] = dwarf::format_value(kid.val, ctx);
            if (has_children(kid.val, ctx)) {
                item["variablesReference"] = a.variables_reference(std::move(ref));
            }
        } catch (const std::exception& e) {
            item["value"] = std::string("<error: ") + e.what() + ">";
        }
        out.push_back(std::move(item));
    }
    return out;
}

}  // namespace ompdbg::app::dap
