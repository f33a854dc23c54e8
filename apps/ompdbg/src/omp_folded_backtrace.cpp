// `bt` of a thread in an OpenMP region with the runtime's frames folded into one line
// (`[omp parallel in main at fig8.c:21, thread 2 of 4]`), over the model of the runtime's
// frames (libdebugger's omp/stack_folding.hpp); `omp bt continued` follows a team member
// into the thread that encountered the region.

#include "commands_dmpl_shared.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "omp_stack_view.hpp"
#include "session.hpp"
#include "frame_line.hpp"

namespace ompdbg::app::dmpl_impl {

namespace {

/// "[omp parallel in main at fig8.c:21, thread 2 of 4]".
/// The label of a region `levels_out` regions outward of the innermost one `tid` runs in:
/// the thread's number and team size in that region where the runtime can tell.
std::string region_line(const fold_context& fc, pid_t tid, const std::string& parent, const std::string& where,
                        int levels_out) {
    std::string l = "[omp parallel in " + parent;
    if (!where.empty()) {
        l += " at " + where;
    }
    if (auto pos = omp_position(*fc.s, tid, levels_out)) {
        l += fmt::format(", thread {} of {}", pos->first, pos->second);
    }
    return l + "]";
}

/// Prints frames[from..] of `tid` with runtime frames folded into a region line. Every
/// frame keeps its own number in `tid`'s stack, the one `frame N` selects there. A team
/// member's stack ends at its region line; with `continued`, the frames of the thread that
/// encountered the region follow a separator naming that thread, numbered as in its stack.
void print_folded(session& s, const fold_context& fc, pid_t tid, const std::vector<stack_frame>& frames,
                  std::size_t from, bool continued, nlohmann::json& rows, int depth) {
    for (std::size_t i = from; i < frames.size(); ++i) {
        const stack_frame& f = frames[i];
        std::string text = format_frame_line(s, f, true);
        s.out().line(text);
        nlohmann::json row = frame_json(f);
        row["lwp"] = tid;
        rows.push_back(std::move(row));
        auto parent = outlined_parent(fc, f);
        if (!parent) {
            continue;
        }
        // Fold the outlined wrappers and the runtime's frames above this routine.
        std::size_t j = i + 1;
        bool saw_dispatcher = false;
        std::size_t outermost = i;
        // The routine's wrappers and the runtime up to the frame that encountered the
        // construct: after the dispatcher, the first frame outside the runtime is that
        // frame, even when it is an enclosing region's outlined routine (nested regions).
        while (j < frames.size()) {
            bool runtime = in_runtime(fc, frames[j]);
            if (!runtime && (saw_dispatcher || !outlined_parent(fc, frames[j]))) {
                break;
            }
            saw_dispatcher = saw_dispatcher || is_dispatcher(fc, frames[j]);
            if (!runtime) {
                outermost = j;
            }
            ++j;
        }
        const int levels_out = dispatched_regions(fc, frames, i);
        const std::string construct = construct_where(frames[outermost]);
        auto where = [&](const stack_frame& parent_frame) {
            return construct.empty() ? where_of(parent_frame) : construct;
        };
        if (saw_dispatcher && j < frames.size()) {
            // This thread encountered the construct: its caller's frames follow.
            std::string l = region_line(fc, tid, *parent, where(frames[j]), levels_out);
            s.out().line(l);
            rows.push_back({{"region", l}, {"lwp", tid}});
            i = j - 1;
            continue;
        }
        // A team member: its stack ends in the thread start; the parent task's frames are in
        // the thread that encountered the construct.
        std::string outermost_outlined;
        for (std::size_t k = i; k < j; ++k) {
            if (outlined_parent(fc, frames[k])) {
                outermost_outlined = frame_symbol(frames[k]);
            }
        }
        // A plain value, not the optional: gcc's -O2 takes the optional's members read
        // under has_value() for uninitialised (-Wmaybe-uninitialized) once find_encounter
        // is another file's.
        auto found = depth < 8 ? find_encounter(fc, tid, outermost_outlined, *parent) : std::nullopt;
        const bool has_enc = found.has_value();
        const region_encounter enc = found.value_or(region_encounter{});
        const auto* other = has_enc ? &s.stack(enc.tid) : nullptr;
        std::string l =
            region_line(fc, tid, *parent, other != nullptr ? where((*other)[enc.frame]) : construct, levels_out);
        s.out().line(l);
        nlohmann::json region{{"region", l}, {"lwp", tid}};
        if (has_enc) {
            region["encountered_by"] = enc.tid;
        }
        rows.push_back(std::move(region));
        if (continued && has_enc) {
            std::string sep = continued_separator(s, enc.tid);
            s.out().line(sep);
            rows.push_back({{"continued_in", enc.tid}, {"thread", s.thread_number(enc.tid)}});
            print_folded(s, fc, enc.tid, *other, enc.frame, continued, rows, depth + 1);
        }
        return;
    }
}

}  // namespace

bool folded_backtrace(session& s, bool continued) {
    if (s.target() == nullptr || s.selected_tid() == 0) {
        return false;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return false;
    }
    const auto& frames = s.stack(s.selected_tid());
    if (!innermost_outlined(*fc, frames)) {
        return false;
    }
    nlohmann::json rows = nlohmann::json::array();
    print_folded(s, *fc, s.selected_tid(), frames, 0, continued, rows, 0);
    s.out().field("frames", rows);
    return true;
}

}  // namespace ompdbg::app::dmpl_impl
