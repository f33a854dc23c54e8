// `bt` of a thread in an OpenMP region with the runtime's frames folded into one line
// (`[omp parallel in main at fig8.c:21, thread 2 of 4]`): libdebugger's omp/folded_stack
// folds the stack (the DAP server shows the same entries as frames), this prints it;
// `omp bt continued` follows a team member into the thread that encountered the region.

#include "commands_dmpl_shared.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "omp_stack_view.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/omp/folded_stack.hpp"

namespace ompdbg::app::dmpl_impl {

namespace {

/// "[omp parallel in main at fig8.c:21, thread 2 of 4]".
std::string region_line(const folded_entry& e) {
    std::string l = "[omp " + e.construct + " in " + e.parent;
    if (!e.where.empty()) {
        l += " at " + e.where;
    }
    if (e.position) {
        l += fmt::format(", thread {} of {}", e.position->first, e.position->second);
    }
    return l + "]";
}

}  // namespace

bool folded_backtrace(session& s, bool continued) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return false;
    }
    auto entries = folded_stack(s, s.selected_tid(), continued);
    if (!entries) {
        return false;
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const folded_entry& e : *entries) {
        switch (e.what) {
        case folded_entry::kind::frame: {
            const stack_frame& f = s.stack(e.tid)[e.index];
            s.out().line(format_frame_line(s, f, true));
            nlohmann::json row = frame_json(f);
            row["lwp"] = e.tid;
            rows.push_back(std::move(row));
            break;
        }
        case folded_entry::kind::region: {
            std::string l = region_line(e);
            s.out().line(l);
            nlohmann::json region{{"region", l}, {"lwp", e.tid}};
            if (e.encountered_by) {
                region["encountered_by"] = *e.encountered_by;
            }
            rows.push_back(std::move(region));
            break;
        }
        case folded_entry::kind::continued:
            s.out().line(continued_separator(s, e.tid));
            rows.push_back({{"continued_in", e.tid}, {"thread", s.thread_number(e.tid)}});
            break;
        }
    }
    s.out().field("frames", rows);
    return true;
}

}  // namespace ompdbg::app::dmpl_impl
