// What a breakpoint hit means (breakpoint_hits.hpp).
#include "ompdbg/debugger/breakpoints/breakpoint_hits.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

namespace {

/// gdb's skip_inline_frames at a breakpoint stop: the inlined copies that start at the pc
/// are hidden (the stop shows their call site), except from the copy of the function the
/// breakpoint was set on inwards: `break scale` stops "in" scale even when the inlined
/// square it calls starts at the same address, and the next `step` enters square.
int inline_copies_hidden_at(session& s, std::uint64_t pc, const std::vector<const breakpoint_location*>& locs) {
    auto* p = s.process();
    const tracer::loaded_module* m = p != nullptr ? p->module_at(virt_addr(pc)) : nullptr;
    dwarf::debug_info* dbg = m != nullptr && m->elf ? m->elf->debug() : nullptr;
    if (dbg == nullptr) {
        return 0;
    }
    auto chain = dbg->function_chain_at(pc - m->load_bias);
    int entered = inline_entries_at(chain, pc - m->load_bias);
    int hidden = 0;
    for (; hidden < entered; ++hidden) {
        const std::string& name = chain[static_cast<std::size_t>(hidden)].name;
        bool set_here = std::any_of(locs.begin(), locs.end(), [&](const breakpoint_location* l) {
            return l->function.empty() || l->function == name;
        });
        if (set_here) {
            break;
        }
    }
    return hidden;
}

/// Whether `bp`'s condition holds for thread `tid` (a catchpoint tests its event's fields,
/// a breakpoint evaluates it in the thread's innermost frame). Throws when it cannot be
/// evaluated.
bool condition_holds(session& s, breakpoint& bp, pid_t tid) {
    if (bp.test_condition) {
        return bp.test_condition(tid, bp.condition);
    }
    auto& frames = s.innermost_frames(tid);
    if (frames.empty()) {
        error::send("No frame selected.");
    }
    frame_context ctx(s, tid, frames.front());
    return dwarf::is_true(dwarf::evaluate(bp.condition, ctx));
}

}  // namespace

breakpoint_hit_decision decide_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr) {
    collect_fast_counters(s);   // the agent's hits and ignore counts before this one's
    breakpoint_hit_decision d;
    std::vector<const breakpoint_location*> stopping_locations;
    bool ignored = false;
    for (auto& [bp, loc] : breakpoints_at(s, addr)) {
        if (bp->thread_tid && *bp->thread_tid != tid) {
            continue;
        }
        if (!bp->condition.empty()) {
            try {
                if (!condition_holds(s, *bp, tid)) {
                    continue;
                }
            } catch (const std::exception& e) {
                d.condition_errors.push_back(
                    fmt::format("Error in testing condition for breakpoint {}:\n{}", bp->number, e.what()));
            }
        }
        ++bp->hit_count;
        if (bp->ignore_count > 0) {
            --bp->ignore_count;
            ignored = true;
            continue;
        }
        if (bp->dprintf) {
            d.dprintfs.push_back(bp->number);
            continue;
        }
        if (d.stopping.empty()) {
            d.first_location = loc;
        }
        d.stopping.push_back(bp->number);
        if (loc < bp->locations.size()) {
            stopping_locations.push_back(&bp->locations[loc]);
        }
    }
    if (ignored) {
        push_fast_ignore_counts(s);   // the agent keeps counting from the new value
    }
    if (d.stops()) {
        d.hidden_inline_frames = inline_copies_hidden_at(s, addr, stopping_locations);
    }
    return d;
}

void end_temporary_breakpoints(session& s, const std::vector<int>& stopping) {
    for (int n : stopping) {
        if (auto it = s.breakpoints().find(n); it != s.breakpoints().end() && it->second.temporary) {
            s.breakpoints().erase(it);
        }
    }
    sync_breakpoint_sites(s);
}

}  // namespace ompdbg::debugger
