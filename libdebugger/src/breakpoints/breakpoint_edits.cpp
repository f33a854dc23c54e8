// Making, conditioning and deleting breakpoints (breakpoint_edits.hpp).
#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"

#include <exception>
#include <utility>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::debugger {

breakpoint make_breakpoint(session& s, const breakpoint_request& r, std::string& why) {
    breakpoint bp;
    bp.locations = resolve_spec(s, r.spec, why);
    bp.pending = bp.locations.empty();
    // gdb binds a bare LINE to the file it means now; a pending spec stays as typed.
    bp.spec = bp.pending ? r.spec : bind_line_spec(s, r.spec);
    bp.temporary = r.temporary;
    bp.dprintf = r.dprintf;
    bp.commands = r.commands;
    bp.condition = r.condition;
    bp.thread_tid = r.thread_tid;
    bp.ranks = r.ranks ? *r.ranks : breakpoint_ranks_of_focus(s);
    return bp;
}

int add_breakpoint(session& s, breakpoint bp) {
    if (bp.number == 0) {
        bp.number = s.next_breakpoint_number();
    }
    const int number = bp.number;
    const bool pending = bp.pending;
    const bool wants_agent = !bp.condition.empty() || bp.dprintf;
    s.breakpoints()[number] = std::move(bp);
    if (pending) {
        return number;   // planted when a library that has it loads (refresh_breakpoints)
    }
    if (wants_agent) {
        load_agent_on_demand(s);   // an attached process's first condition (dprintf) brings the agent
    }
    try {
        sync_breakpoint_sites(s);
    } catch (const std::exception& e) {
        error::send(fmt::format("Cannot insert breakpoint {}.\n{}", number, e.what()));
    }
    return number;
}

void set_breakpoint_condition(session& s, int number, const std::string& condition) {
    auto it = s.breakpoints().find(number);
    if (it == s.breakpoints().end()) {
        error::send(fmt::format("No breakpoint number {}.", number));
    }
    if (!condition.empty()) {
        dwarf::parse_expression(condition);   // syntax errors now, as gdb does
    }
    it->second.condition = condition;
    if (!condition.empty()) {
        load_agent_on_demand(s);
    }
    sync_fast_sites(s);   // a pad evaluating the old condition would miss hits
}

bool delete_breakpoint(session& s, int number) {
    if (s.breakpoints().erase(number) == 0) {
        return false;
    }
    sync_breakpoint_sites(s);
    return true;
}

}  // namespace ompdbg::debugger
