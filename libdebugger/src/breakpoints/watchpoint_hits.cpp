// What a watchpoint stop means (watchpoint_hits.hpp).
#include "ompdbg/debugger/breakpoints/watchpoint_hits.hpp"

#include <algorithm>
#include <exception>

#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::debugger {

std::optional<watchpoint_hit> decide_watchpoint_hit(session& s, const tracer::stop_reason& why) {
    watchpoint* w = nullptr;
    for (auto& [n, candidate] : s.watchpoints()) {
        if ((candidate.tracer_id == why.watchpoint_id && candidate.tracer_id != 0) ||
            std::find(candidate.chain_ids.begin(), candidate.chain_ids.end(), why.watchpoint_id) !=
                candidate.chain_ids.end()) {
            w = &candidate;
        }
    }
    if (w == nullptr) {
        return std::nullopt;
    }
    std::vector<std::byte> now;
    if (w->chain.empty()) {
        now = watched_bytes(s, *w);
    } else if (auto computed = computed_bytes(s, *w, why.tid)) {
        now = *computed;
    } else {
        return std::nullopt;   // not computable where the write happened: go on, as gdb
    }
    bool changed = now != w->old_bytes;
    if (w->kind == tracer::watch_kind::write && !changed) {
        return std::nullopt;   // gdb: a write of the same value does not stop
    }
    ++w->hit_count;
    watchpoint_hit hit{w->number, changed, w->old_bytes, now};
    w->old_bytes = std::move(now);
    return hit;
}

std::string watchpoint_value_text(session& s, const watchpoint& w, const std::vector<std::byte>& bytes) {
    dwarf::value v = w.value;
    v.bytes = bytes;
    try {
        frame_context ctx = frame_context::for_selection(s);
        return dwarf::format_value(v, ctx, s.settings().print);
    } catch (const std::exception&) {
        frame_context ctx(s);
        return dwarf::format_value(v, ctx, s.settings().print);
    }
}

std::vector<int> watchpoints_out_of_scope(session& s, pid_t tid, std::uint64_t addr) {
    std::vector<int> ended;
    for (auto& [n, w] : s.watchpoints()) {
        if (w.scope_pc != addr || w.scope_tid != tid) {
            continue;
        }
        auto* t = s.process()->find_thread(tid);
        // Returned when the stack pointer is above the frame's CFA minus the return address.
        if (t != nullptr && t->regs().sp() >= w.scope_cfa) {
            ended.push_back(n);
        }
    }
    return ended;
}

}  // namespace ompdbg::debugger
