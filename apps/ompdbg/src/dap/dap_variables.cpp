// variables (the Locals, Arguments and ICVs scopes, and the children of a value) and
// setVariable, from the model. In an outlined OpenMP region the locals are the user's
// variables by source name, labelled with their data-sharing (private, shared, ...:
// libdebugger's omp/outlined_locals).
#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "dap/dap_values.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "ompdbg/debugger/omp/outlined_locals.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app::dap {

namespace {

/// The outlined region's variables of frame `f`; nullopt in an ordinary frame (or one the
/// model cannot tell about).
std::optional<std::vector<outlined_local>> outlined_variables(adapter& a, const frame_ref& f) {
    a.select(f);
    try {
        return outlined_region_locals(a.model());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::vector<nlohmann::json> frame_variables(adapter& a, const frame_ref& f, bool parameters) {
    std::vector<nlohmann::json> out;
    if (!parameters) {
        if (auto locals = outlined_variables(a, f)) {
            for (const outlined_local& row : *locals) {
                nlohmann::json v = variable_json(a, f, row.name, row.name);
                // The model shows a shared variable itself, not clang's reference to it.
                v["value"] = row.value;
                if (!row.scoping.empty()) {
                    v["value"] = row.value + "  (" + row.scoping + ")";
                    v["presentationHint"] = {{"kind", "data"}, {"attributes", {row.scoping}}};
                }
                out.push_back(v);
            }
            return out;
        }
    }
    std::vector<std::string> names;
    {
        frame_context ctx = context_of(a, f);
        for (const auto& v : ctx.frame_variables(parameters)) {
            names.push_back(v.name);
        }
    }
    for (const auto& n : names) {
        out.push_back(variable_json(a, f, n, n));
    }
    return out;
}

/// The selected thread's ICVs at every scope (OMPD's): the scope is the variable's type.
std::vector<nlohmann::json> icv_variables(adapter& a, const frame_ref& f) {
    std::vector<nlohmann::json> out;
    a.select(f);
    std::vector<omp_icv_row> rows;
    try {
        rows = omp_icv_rows(a.model(), std::nullopt);
    } catch (const std::exception&) {
        return out;   // no longer an OpenMP thread: an empty scope
    }
    for (const omp_icv_row& row : rows) {
        out.push_back({{"name", row.name},
                       {"value", row.number ? std::to_string(*row.number) : row.value},
                       {"type", row.scope},
                       {"variablesReference", 0}});
    }
    return out;
}

std::vector<nlohmann::json> list(adapter& a, const variable_ref& ref) {
    switch (ref.what) {
    case variable_ref::kind::locals: return frame_variables(a, ref.frame, false);
    case variable_ref::kind::arguments: return frame_variables(a, ref.frame, true);
    case variable_ref::kind::icvs: return icv_variables(a, ref.frame);
    case variable_ref::kind::children: return child_variables(a, ref);
    }
    return {};
}

void variables(adapter& a, request& r) {
    variable_ref ref = a.variables(r.arguments().value("variablesReference", std::int64_t{0}));
    model_access access(a);
    r.respond({{"variables", list(a, ref)}});
}

/// `expression = value` evaluated in frame `f`, as `set var` does.
void assign(adapter& a, const frame_ref& f, const std::string& expression, const std::string& value) {
    {
        frame_context ctx = context_of(a, f);
        dwarf::evaluate(expression + " = " + value, ctx);
    }
    // A register or stack slot written changes the frames: they are unwound again when next
    // asked (gdb reinitialises its frame cache).
    a.model().current_inferior().stacks.clear();
}

void set_variable(adapter& a, request& r) {
    variable_ref ref = a.variables(r.arguments().value("variablesReference", std::int64_t{0}));
    std::string name = r.string_arg("name");
    std::string value = r.string_arg("value");
    if (ref.what == variable_ref::kind::icvs) {
        error::send("ICVs are read-only here: the program sets them (omp_set_num_threads ...)");
    }
    model_access access(a);
    std::string expression;
    for (const auto& v : list(a, ref)) {
        if (v.value("name", std::string()) == name) {
            expression = v.value("evaluateName", std::string());
        }
    }
    if (expression.empty()) {
        error::send("no variable named " + name + " here");
    }
    assign(a, ref.frame, expression, value);
    nlohmann::json now = variable_json(a, ref.frame, name, expression);
    r.respond({{"value", now.value("value", std::string())},
               {"type", now.value("type", std::string())},
               {"variablesReference", now.value("variablesReference", 0)}});
}

}  // namespace

void register_variable_handlers(handler_table& t) {
    t["variables"] = variables;
    t["setVariable"] = set_variable;
}

}  // namespace ompdbg::app::dap
