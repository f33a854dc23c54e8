// `omp bt`, printed: the selected thread's stack with the OpenMP runtime's frames folded away
// and each outlined region shown as its construct, continued into the encountering thread's
// stack (libdebugger's omp_folded_stack, omp/ompd_views.hpp). Every frame keeps its number in
// its own thread's stack, the one `frame N` selects there.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands_omp_state.hpp"
#include "omp_stack_view.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/omp/ompd_views.hpp"

namespace ompdbg::app::omp_impl {

void cmd_omp_bt(session& s, std::string_view args) {
    std::string mode(trim(args));
    if (!mode.empty() && mode != "continued") {
        error::send("Unknown omp bt mode \"" + mode + "\": use `omp bt` or `omp bt continued`.");
    }
    std::vector<omp_bt_segment> segments = omp_folded_stack(s, mode == "continued");
    nlohmann::json frames = nlohmann::json::array();
    for (std::size_t k = 0; k < segments.size(); ++k) {
        const omp_bt_segment& seg = segments[k];
        if (k > 0) {
            s.out().line(continued_separator(s, seg.tid));
            frames.push_back({{"continued_in", seg.tid}, {"thread", s.thread_number(seg.tid)}});
        }
        const auto& stack = s.stack(seg.tid);
        for (const auto& fr : seg.frames) {
            const stack_frame& f = stack[fr.index];
            const int number = f.level;
            if (!fr.construct.empty()) {
                std::string loc = fr.location.empty() ? "" : " at " + fr.location;
                s.out().line(fmt::format("#{:<3}{}{}  [{}]", number, fr.construct, loc, frame_function_name(f)));
                frames.push_back({{"level", number},
                                  {"lwp", seg.tid},
                                  {"function", frame_function_name(f)},
                                  {"construct", fr.construct},
                                  {"location", fr.location}});
                continue;
            }
            std::string line = format_frame_line(s, f, false);
            s.out().line(fmt::format("#{:<3}{}", number, line));
            frames.push_back({{"level", number}, {"lwp", seg.tid}, {"function", frame_function_name(f)}, {"text", line}});
        }
    }
    s.out().field("frames", frames);
}

}  // namespace ompdbg::app::omp_impl
