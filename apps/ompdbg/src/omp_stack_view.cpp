#include "omp_stack_view.hpp"

#include <fmt/format.h>

#include "session.hpp"

namespace ompdbg::app {

nlohmann::json frame_json(const stack_frame& f) {
    nlohmann::json jf{{"level", f.level}, {"pc", fmt::format("{:#x}", f.pc())}, {"function", frame_function_name(f)}};
    if (f.line && f.line->line > 0) {
        jf["file"] = f.line->file;
        jf["line"] = f.line->line;
    }
    return jf;
}

std::string continued_separator(session& s, pid_t encountering_tid) {
    int n = s.thread_number(encountering_tid);
    std::string thread = n > 0 ? std::to_string(n) : "?";
    return fmt::format("---- continued in thread {} (LWP {}), which encountered the construct; "
                       "frame numbers are thread {}'s ----",
                       thread, encountering_tid, thread);
}

}  // namespace ompdbg::app
