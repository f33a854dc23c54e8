// stackTrace and scopes, from the model: the stack is the one `bt` shows (libdebugger's
// omp/folded_stack): in an OpenMP region the runtime's frames are folded away and each
// region stands as a label frame ("#pragma omp parallel at omp_nested.c:29 · thread 0 of 3").
#include <fmt/format.h>

#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/omp/folded_stack.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"
#include "ompdbg/debugger/omp/outlined_locals.hpp"
#include "ompdbg/debugger/stack/stack.hpp"

namespace ompdbg::app::dap {

namespace {

/// "#pragma omp parallel at f.c:29 · thread 0 of 3" (without a location: "... in main").
std::string region_label(const folded_entry& e) {
    std::string out = "#pragma omp " + e.construct + (e.where.empty() ? " in " + e.parent : " at " + e.where);
    if (e.position) {
        out += fmt::format(" \u00b7 thread {} of {}", e.position->first, e.position->second);
    }
    return out;
}

std::string base_name(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A DAP StackFrame for frame `f` of thread `tid`.
nlohmann::json frame_json(adapter& a, std::size_t inferior, pid_t tid, const stack_frame& f) {
    const bool has_line = f.line && f.line->line > 0;
    nlohmann::json frame{{"id", a.frame_id({inferior, tid, f.level})},
                         {"name", frame_function_name(f)},
                         {"line", has_line ? f.line->line : 0},
                         {"column", has_line ? 1 : 0},
                         {"instructionPointerReference", fmt::format("{:#x}", f.pc())}};
    if (has_line && !f.line->file.empty()) {
        frame["source"] = {{"name", base_name(f.line->file)}, {"path", f.line->file}};
    } else {
        frame["presentationHint"] = "subtle";
    }
    return frame;
}

// `set omp-bt-filter off` shows every frame, as `bt` does then.
void stack_trace(adapter& a, request& r) {
    pid_t tid = r.arguments().value("threadId", 0);
    frame_ref top = a.thread_frame(tid);
    a.select(top);
    model_access access(a);
    session& s = access.model();
    std::optional<std::vector<folded_entry>> folded = bt_folded_stack(s, tid);
    const std::vector<stack_frame>& stack = s.stack(tid);
    if (stack.empty()) {
        error::send("No stack.");
    }
    nlohmann::json frames = nlohmann::json::array();
    if (!folded) {
        for (const stack_frame& f : stack) {
            frames.push_back(frame_json(a, top.inferior, tid, f));
        }
    } else {
        int last_level = 0;
        for (const folded_entry& e : *folded) {
            if (e.what == folded_entry::kind::frame) {
                const stack_frame& f = s.stack(e.tid)[e.index];
                last_level = f.level;
                frames.push_back(frame_json(a, top.inferior, e.tid, f));
            } else if (e.what == folded_entry::kind::region) {
                // A label frame selects the frame below it: its variables are the routine's.
                frames.push_back({{"id", a.frame_id({top.inferior, tid, last_level})},
                                  {"name", region_label(e)},
                                  {"line", 0},
                                  {"column", 0},
                                  {"presentationHint", "label"}});
            }
        }
    }
    r.respond({{"stackFrames", page_of(frames, r.arguments().value("startFrame", 0), r.arguments().value("levels", 0))},
               {"totalFrames", frames.size()}});
}

/// Whether the selected frame runs an outlined OpenMP routine whose locals the model names
/// by their source names (a frame it cannot tell about is an ordinary one).
bool outlined_frame(session& s) {
    try {
        return outlined_region_locals(s).has_value();
    } catch (const std::exception&) {
        return false;
    }
}

/// Whether the selected thread has ICVs to show (an OpenMP thread, OMPD available).
bool has_icvs(session& s) {
    try {
        omp_icv_rows(s, std::nullopt);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

void scopes(adapter& a, request& r) {
    const frame_ref f = a.frame(r.arguments().value("frameId", std::int64_t{0}));
    a.select(f);
    model_access access(a);
    nlohmann::json list = nlohmann::json::array();
    list.push_back({{"name", "Locals"},
                    {"presentationHint", "locals"},
                    {"variablesReference", a.variables_reference({variable_ref::kind::locals, f, {}, {}})},
                    {"expensive", false}});
    // In an outlined OpenMP region the Locals are the user's variables with their
    // data-sharing (the routine's parameters are the runtime's): no Arguments scope there.
    if (!outlined_frame(access.model())) {
        list.push_back({{"name", "Arguments"},
                        {"presentationHint", "arguments"},
                        {"variablesReference", a.variables_reference({variable_ref::kind::arguments, f, {}, {}})},
                        {"expensive", false}});
    }
    if (has_icvs(access.model())) {
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
