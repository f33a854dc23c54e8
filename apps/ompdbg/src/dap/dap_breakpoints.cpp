// setBreakpoints (line breakpoints, conditions, hit conditions, logpoints),
// setFunctionBreakpoints, setExceptionBreakpoints (signals): each a set of the session's
// logical breakpoints, replaced as a whole as DAP asks. Breakpoints are made, conditioned
// and deleted through the model (libdebugger's breakpoints/: breakpoint_edits, which the
// CLI's `break`, `dprintf` and `condition` call too; resolution and the fast-breakpoint
// agent are its), and described to the client from the model's breakpoint; the signals are
// the model's signal policy.
#include <initializer_list>

#include <fmt/format.h>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/run/signal_policy.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app::dap {

namespace {

/// One breakpoint as the client asked for it.
struct wanted {
    std::string spec;
    std::string condition;
    std::string hit_condition;
    std::string log_message;
};

/// The ignore count a DAP hitCondition means: "N" (or ">= N") stops from the N-th hit on.
std::optional<int> ignore_count_of(const std::string& hit) {
    std::string h = hit;
    if (h.rfind(">=", 0) == 0) {
        h = h.substr(2);
    }
    try {
        std::size_t used = 0;
        int n = std::stoi(h, &used);
        if (h.find_first_not_of(" \t", used) == std::string::npos && n >= 1) {
            return n - 1;
        }
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

/// Creates one breakpoint through the model (breakpoints/breakpoint_edits.hpp); its DAP
/// description (verified, line, message). A location without code yet makes it pending
/// (unless `set breakpoint pending off`), as the CLI's `break` does when it does not ask.
nlohmann::json create(adapter& a, const wanted& w, std::vector<int>& numbers) {
    nlohmann::json out{{"verified", false}};
    std::optional<int> ignore;
    if (!w.hit_condition.empty()) {
        ignore = ignore_count_of(w.hit_condition);
        if (!ignore) {
            out["message"] = "hit condition \"" + w.hit_condition + "\" is not a number of hits (N or >= N)";
            return out;
        }
    }
    breakpoint_request asked;
    asked.spec = w.spec;
    if (!w.log_message.empty()) {
        asked.dprintf = true;   // its hits print the message and go on
        asked.commands = {"dap-log " + w.log_message};
    }
    std::string why;
    std::string problem;
    int number = 0;
    try {
        a.call_in_process([&] {
            breakpoint made = make_breakpoint(a.model(), asked, why);
            if (made.pending && a.model().settings().breakpoint_pending == false) {
                error::send(why);
            }
            if (!w.condition.empty()) {
                try {
                    dwarf::parse_expression(w.condition);   // syntax errors now, as gdb does
                    made.condition = w.condition;
                } catch (const std::exception& e) {
                    problem = std::string("condition: ") + e.what();
                }
            }
            if (ignore) {
                made.ignore_count = *ignore;
            }
            made.number = a.model().next_breakpoint_number();
            number = made.number;
            add_breakpoint(a.model(), std::move(made));
        });
    } catch (const std::exception& e) {
        if (number == 0) {
            out["message"] = e.what();
            return out;
        }
        problem = e.what();   // kept, but a site could not be planted
    }
    numbers.push_back(number);
    out["id"] = number;
    if (!problem.empty()) {
        out["message"] = problem;
    }
    // What the client is told of it is the model's breakpoint (libdebugger's
    // breakpoints/breakpoint.hpp): pending, or its first location.
    auto& model = a.model().breakpoints();
    auto it = model.find(number);
    if (it == model.end()) {
        out["message"] = "no breakpoint was set";
        return out;
    }
    const breakpoint& made = it->second;
    a.note_breakpoint(number, !made.pending && !made.locations.empty());
    if (made.pending) {
        out["message"] = "pending: " + (why.empty() ? "no code at " + w.spec + " yet" : why);
        return out;
    }
    out["verified"] = !made.locations.empty();
    if (!made.locations.empty()) {
        out["line"] = made.locations.front().line;
        if (!made.locations.front().file.empty()) {
            out["source"] = {{"path", made.locations.front().file}};
        }
    }
    return out;
}

nlohmann::json json_of(const std::vector<wanted>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& w : list) {
        out.push_back({w.spec, w.condition, w.hit_condition, w.log_message});
    }
    return out;
}

/// With rank sessions, every session of the job sends the client's breakpoints (a client
/// keeps one set for all its sessions): a set equal to the one in force is answered with
/// the breakpoints that implement it, not made again (their ids stay valid in every
/// session). nullopt when the set differs.
std::optional<nlohmann::json> same_set(adapter& a, const std::string& key, const std::vector<wanted>& list) {
    auto asked = a.breakpoint_requests().find(key);
    if (a.ranks() == nullptr || !a.ranks()->active() || asked == a.breakpoint_requests().end() ||
        asked->second != json_of(list)) {
        return std::nullopt;
    }
    const auto& numbers = a.breakpoint_sets()[key];
    if (numbers.size() != list.size()) {
        return std::nullopt;
    }
    nlohmann::json out = nlohmann::json::array();
    for (int n : numbers) {
        auto it = a.model().breakpoints().find(n);
        if (it == a.model().breakpoints().end()) {
            return std::nullopt;
        }
        const breakpoint& bp = it->second;
        bool verified = !bp.pending && !bp.locations.empty();
        nlohmann::json b{{"id", n}, {"verified", verified}};
        if (verified) {
            b["line"] = bp.locations.front().line;
            if (!bp.locations.front().file.empty()) {
                b["source"] = {{"path", bp.locations.front().file}};
            }
        }
        out.push_back(b);
    }
    return out;
}

/// Deletes the breakpoints of `key` and creates `list` instead.
nlohmann::json replace(adapter& a, const std::string& key, const std::vector<wanted>& list) {
    if (auto kept = same_set(a, key, list)) {
        return *kept;
    }
    a.breakpoint_requests()[key] = json_of(list);
    auto& numbers = a.breakpoint_sets()[key];
    for (int n : numbers) {
        a.call_in_process([&] { delete_breakpoint(a.model(), n); });
    }
    numbers.clear();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& w : list) {
        out.push_back(create(a, w, numbers));
    }
    return out;
}

wanted wanted_of(const nlohmann::json& b, std::string spec) {
    wanted w;
    w.spec = std::move(spec);
    w.condition = b.value("condition", std::string());
    w.hit_condition = b.value("hitCondition", std::string());
    w.log_message = b.value("logMessage", std::string());
    return w;
}

void set_breakpoints(adapter& a, request& r) {
    const auto& source = r.arguments().value("source", nlohmann::json::object());
    std::string path = source.is_object() ? source.value("path", std::string()) : std::string();
    if (path.empty()) {
        error::send("setBreakpoints needs \"source\": {\"path\": ...}");
    }
    std::vector<wanted> list;
    for (const auto& b : r.arguments().value("breakpoints", nlohmann::json::array())) {
        list.push_back(wanted_of(b, fmt::format("{}:{}", path, b.value("line", 0))));
    }
    nlohmann::json created = replace(a, path, list);
    for (auto& c : created) {
        if (!c.contains("source")) {
            c["source"] = {{"path", path}};
        }
    }
    r.respond({{"breakpoints", created}});
}

void set_function_breakpoints(adapter& a, request& r) {
    std::vector<wanted> list;
    for (const auto& b : r.arguments().value("breakpoints", nlohmann::json::array())) {
        list.push_back(wanted_of(b, b.value("name", std::string())));
    }
    r.respond({{"breakpoints", replace(a, "", list)}});
}

/// Whether the signals `names` stop the program and are reported (gdb's `handle NAMES
/// stop print`, or `nostop noprint`), in the model's signal policy.
void report_signals(session& s, std::initializer_list<const char*> names, bool on) {
    for (const char* name : names) {
        if (signal_row* row = s.signals().find(name)) {
            row->stop = on;
            row->print = on;
        }
    }
}

void set_exception_breakpoints(adapter& a, request& r) {
    bool fatal = false, other = false;
    for (const auto& f : r.arguments().value("filters", nlohmann::json::array())) {
        fatal = fatal || f == "fatal-signals";
        other = other || f == "other-signals";
    }
    report_signals(a.model(), {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"}, fatal);
    report_signals(a.model(), {"SIGUSR1", "SIGUSR2", "SIGALRM", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGQUIT"}, other);
    r.respond();
}

/// `dap-log MESSAGE`: MESSAGE with each {EXPR} replaced by its value in the selected frame.
void cmd_dap_log(session& s, std::string_view message) {
    std::string out;
    std::size_t i = 0;
    while (i < message.size()) {
        std::size_t open = message.find('{', i);
        std::size_t close = open == std::string_view::npos ? open : message.find('}', open);
        if (close == std::string_view::npos) {
            out += message.substr(i);
            break;
        }
        out += message.substr(i, open - i);
        std::string expr(message.substr(open + 1, close - open - 1));
        try {
            frame_context ctx = frame_context::for_selection(s);
            out += dwarf::format_value(dwarf::evaluate(expr, ctx), ctx);
        } catch (const std::exception& e) {
            out += std::string("<error: ") + e.what() + ">";
        }
        i = close + 1;
    }
    s.out().line(out);
}

}  // namespace

void register_logpoint_command(command_table& t) {
    t.add(command{"dap-log", {}, "Print a logpoint's message (the DAP server's logpoints).",
                  "dap-log MESSAGE\nMESSAGE with each {EXPR} replaced by its value in the selected frame.",
                  cmd_dap_log, false, nullptr});
}

void register_breakpoint_handlers(handler_table& t) {
    t["setBreakpoints"] = set_breakpoints;
    t["setFunctionBreakpoints"] = set_function_breakpoints;
    t["setExceptionBreakpoints"] = set_exception_breakpoints;
}

}  // namespace ompdbg::app::dap
