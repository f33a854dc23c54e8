// evaluate: `watch` and `hover` evaluate an expression in the frame through the model's
// expression evaluator; `repl` (the debug console) runs any CLI command and answers with
// the text it prints.
#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "dap/dap_values.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

namespace {

/// The frame of the request's frameId, else the innermost frame of the selected thread.
std::optional<frame_ref> frame_of(adapter& a, const request& r) {
    if (auto it = r.arguments().find("frameId"); it != r.arguments().end() && it->is_number_integer()) {
        return a.frame(it->get<std::int64_t>());
    }
    if (a.requester_rank() >= 0) {
        return a.rank_frame(a.requester_rank());   // a rank session: its rank
    }
    if (a.model().process() != nullptr && a.model().selected_tid() != 0) {
        return frame_ref{a.model().current_index(), a.model().selected_tid(), a.model().selected_frame()};
    }
    return std::nullopt;
}

void evaluate(adapter& a, request& r) {
    std::string expression = r.string_arg("expression");
    std::string context = r.string_arg("context", "repl");
    std::optional<frame_ref> f = frame_of(a, r);
    if (context == "repl") {
        if (f) {
            a.select(*f);
        }
        // A rank session's console acts on its rank, the client's on the focus (the CLI's).
        command_result res = a.requester_rank() >= 0 ? a.run_resuming_in_process(expression, stop_hint::none)
                                                     : a.run_resuming(expression, stop_hint::none);
        std::string text = res.console_text();
        if (!res.ok && res.text.empty()) {
            error::send(res.error.empty() ? "the command failed" : res.error);
        }
        if (!text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        r.respond({{"result", text}, {"variablesReference", 0}});
        return;
    }
    if (!f) {
        error::send("No frame: the program is not stopped.");
    }
    model_access access(a);   // the evaluator's warnings reach the console with this answer
    nlohmann::json v = variable_json(a, *f, expression, expression);
    std::string value = v.value("value", std::string());
    if (value.rfind("<error: ", 0) == 0) {
        error::send(value.substr(8, value.size() - 9));
    }
    r.respond({{"result", value},
               {"type", v.value("type", std::string())},
               {"variablesReference", v.value("variablesReference", 0)}});
}

}  // namespace

void register_evaluate_handlers(handler_table& t) {
    t["evaluate"] = evaluate;
}

}  // namespace ompdbg::app::dap
