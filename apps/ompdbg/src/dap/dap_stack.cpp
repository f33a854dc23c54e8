// stackTrace and scopes. The stack is the one `bt` shows: in an OpenMP region the
// runtime's frames are folded away and each region stands as a label frame
// ("#pragma omp parallel at omp_nested.c:29 · thread 0 of 3").
#include <regex>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"

namespace ompdbg::app::dap {

namespace {

/// "[omp parallel in main at f.c:29, thread 0 of 3]" → "#pragma omp parallel at f.c:29 ·
/// thread 0 of 3"; other text unchanged (without its brackets).
std::string region_label(const std::string& text) {
    static const std::regex re(R"(^\[(omp [^\]]*?) in (.+?) at ([^,\]]+)(?:, ([^\]]*))?\]$)");
    std::smatch m;
    if (std::regex_match(text, m, re)) {
        std::string out = "#pragma " + m[1].str() + " at " + m[3].str();
        if (m[4].matched && !m[4].str().empty()) {
            out += " \u00b7 " + m[4].str();
        }
        return out;
    }
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
        return text.substr(1, text.size() - 2);
    }
    return text;
}

std::string base_name(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void stack_trace(adapter& a, request& r) {
    pid_t tid = r.arguments().value("threadId", 0);
    frame_ref top = a.thread_frame(tid);
    a.select(top);
    command_result bt = a.run("backtrace");
    if (!bt.ok) {
        throw std::runtime_error(bt.error.empty() ? "no stack" : bt.error);
    }
    nlohmann::json frames = nlohmann::json::array();
    int last_level = 0;
    for (const auto& row : bt.result.value("frames", nlohmann::json::array())) {
        pid_t lwp = row.value("lwp", tid);
        if (row.contains("region")) {
            frame_ref f{top.inferior, tid, last_level};
            frames.push_back({{"id", a.frame_id(f)},
                              {"name", region_label(row.value("region", std::string()))},
                              {"line", 0},
                              {"column", 0},
                              {"presentationHint", "label"}});
            continue;
        }
        if (!row.contains("level")) {
            continue;   // a separator row of another shape
        }
        last_level = row.value("level", 0);
        frame_ref f{top.inferior, lwp, last_level};
        nlohmann::json frame{{"id", a.frame_id(f)},
                             {"name", row.value("function", std::string("??"))},
                             {"line", row.value("line", 0)},
                             {"column", row.contains("line") ? 1 : 0},
                             {"instructionPointerReference", row.value("pc", std::string())}};
        if (std::string file = row.value("file", std::string()); !file.empty()) {
            frame["source"] = {{"name", base_name(file)}, {"path", file}};
        } else {
            frame["presentationHint"] = "subtle";
        }
        frames.push_back(frame);
    }
    r.respond({{"stackFrames", page_of(frames, r.arguments().value("startFrame", 0), r.arguments().value("levels", 0))},
               {"totalFrames", frames.size()}});
}

void scopes(adapter& a, request& r) {
    const frame_ref f = a.frame(r.arguments().value("frameId", std::int64_t{0}));
    a.select(f);
    nlohmann::json list = nlohmann::json::array();
    // In an outlined OpenMP region `info locals` names the user's variables with their
    // data-sharing (the routine's parameters are the runtime's): no Arguments scope there.
    command_result locals = a.run("info locals");
    bool outlined = locals.result.contains("locals");
    list.push_back({{"name", "Locals"},
                    {"presentationHint", "locals"},
                    {"variablesReference", a.variables_reference({variable_ref::kind::locals, f, {}, {}})},
                    {"expensive", false}});
    if (!outlined) {
        list.push_back({{"name", "Arguments"},
                        {"presentationHint", "arguments"},
                        {"variablesReference", a.variables_reference({variable_ref::kind::arguments, f, {}, {}})},
                        {"expensive", false}});
    }
    if (a.run("omp icvs").ok) {
        list.push_back({{"name", "ICVs"},
                        {"variablesReference", a.variables_reference({variable_ref::kind::icvs, f, {}, {}})},
                        {"expensive", false}});
    }
    r.respond({{"scopes", list}});
}

}  // namespace

void register_stack_handlers(handler_table& t) {
    t["stackTrace"] = stack_trace;
    t["scopes"] = scopes;
}

}  // namespace ompdbg::app::dap
