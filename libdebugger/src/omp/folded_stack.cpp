// A thread's stack with the OpenMP runtime's frames folded into region entries
// (omp/folded_stack.hpp), over the model of the runtime's frames (omp/stack_folding.hpp);
// a team member's stack goes on, with `continued`, in the thread that encountered its region.

#include "ompdbg/debugger/omp/folded_stack.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

namespace {

/// The region entry of a region `levels_out` regions outward of the innermost one `tid`
/// runs in: the thread's number and team size in that region where the runtime can tell.
folded_entry region_entry(const fold_context& fc, pid_t tid, const std::string& parent, const std::string& where,
                          int levels_out) {
    folded_entry e;
    e.what = folded_entry::kind::region;
    e.tid = tid;
    e.parent = parent;
    e.where = where;
    e.position = omp_position(*fc.s, tid, levels_out);
    return e;
}

/// Appends frames[from..] of `tid` with runtime frames folded into region entries. Every
/// frame keeps its own number in `tid`'s stack, the one `frame N` selects there. A team
/// member's stack ends at its region entry; with `continued`, the frames of the thread that
/// encountered the region follow a `continued` entry, numbered as in its stack.
void fold(const fold_context& fc, pid_t tid, const std::vector<stack_frame>& frames, std::size_t from,
          bool continued, std::vector<folded_entry>& out, int depth) {
    session& s = *fc.s;
    for (std::size_t i = from; i < frames.size(); ++i) {
        folded_entry frame;
        frame.tid = tid;
        frame.index = i;
        out.push_back(frame);
        auto parent = outlined_parent(fc, frames[i]);
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
            out.push_back(region_entry(fc, tid, *parent, where(frames[j]), levels_out));
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
        folded_entry region =
            region_entry(fc, tid, *parent, other != nullptr ? where((*other)[enc.frame]) : construct, levels_out);
        if (has_enc) {
            region.encountered_by = enc.tid;
        }
        out.push_back(std::move(region));
        if (continued && has_enc) {
            folded_entry next;
            next.what = folded_entry::kind::continued;
            next.tid = enc.tid;
            out.push_back(next);
            fold(fc, enc.tid, *other, enc.frame, continued, out, depth + 1);
        }
        return;
    }
}

}  // namespace

std::optional<std::vector<folded_entry>> folded_stack(session& s, pid_t tid, bool continued) {
    if (s.target() == nullptr || tid == 0) {
        return std::nullopt;
    }
    auto fc = make_fold_context(s);
    if (!fc) {
        return std::nullopt;
    }
    const auto& frames = s.stack(tid);
    if (!innermost_outlined(*fc, frames)) {
        return std::nullopt;
    }
    std::vector<folded_entry> out;
    fold(*fc, tid, frames, 0, continued, out, 0);
    return out;
}

std::optional<std::vector<folded_entry>> bt_folded_stack(session& s, pid_t tid) {
    if (!omp_bt_filter(s)) {
        return std::nullopt;
    }
    return folded_stack(s, tid, false);
}

}  // namespace ompdbg::debugger
