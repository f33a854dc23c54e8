// variables (the Locals, Arguments and ICVs scopes, and the children of a value) and
// setVariable. In an outlined OpenMP region the locals are `info locals`'s: the user's
// variables by source name, labelled with their data-sharing (private, shared, ...).
#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "dap/dap_values.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

namespace {

std::vector<nlohmann::json> frame_variables(adapter& a, const frame_ref& f, bool parameters) {
    std::vector<nlohmann::json> out;
    if (!parameters) {
        a.select(f);
        command_result locals = a.run("info locals");
        if (auto it = locals.result.find("locals"); it != locals.result.end()) {
            for (const auto& row : *it) {
                std::string name = row.value("name", std::string());
                nlohmann::json v = variable_json(a, f, name, name);
                // `info locals` shows a shared variable itself, not clang's reference to it.
                v["value"] = row.value("value", v.value("value", std::string()));
                std::string scoping = row.value("scoping", std::string());
                if (!scoping.empty()) {
                    v["value"] = v.value("value", std::string()) + "  (" + scoping + ")";
                    v["presentationHint"] = {{"kind", "data"}, {"attributes", {scoping}}};
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

std::vector<nlohmann::json> icv_variables(adapter& a, const frame_ref& f) {
    std::vector<nlohmann::json> out;
    a.select(f);
    command_result r = a.run("omp icvs");
    for (const auto& row : r.result.value("icvs", nlohmann::json::array())) {
        const auto& value = row["value"];
        out.push_back({{"name", row.value("name", std::string())},
                       {"value", value.is_string() ? value.get<std::string>() : value.dump()},
                       {"type", row.value("scope", std::string())},
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
    r.respond({{"variables", list(a, ref)}});
}

void set_variable(adapter& a, request& r) {
    variable_ref ref = a.variables(r.arguments().value("variablesReference", std::int64_t{0}));
    std::string name = r.string_arg("name");
    std::string value = r.string_arg("value");
    if (ref.what == variable_ref::kind::icvs) {
        error::send("ICVs are read-only here: the program sets them (omp_set_num_threads ...)");
    }
    std::string expression;
    for (const auto& v : list(a, ref)) {
        if (v.value("name", std::string()) == name) {
            expression = v.value("evaluateName", std::string());
        }
    }
    if (expression.empty()) {
        error::send("no variable named " + name + " here");
    }
    a.select(ref.frame);
    command_result set = a.run("set var " + expression + " = " + value);
    if (!set.ok) {
        error::send(set.error);
    }
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
