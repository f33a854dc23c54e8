// The dummy frames of calls abandoned in a stop, and their silent end (abandoned_calls.hpp).

#include "ompdbg/debugger/infcall/abandoned_calls.hpp"

#include <algorithm>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger::infcall {

namespace {

struct abandoned_call {
    pid_t pid;
    pid_t tid;
    std::uint64_t return_sp;
    std::uint64_t return_to;
    tracer::registers caller;
    std::optional<std::uint64_t> step_over;
};

/// The session's abandoned calls, kept in its model_state.
struct abandoned_calls {
    std::vector<abandoned_call> calls;
};

std::vector<abandoned_call>& registry(session& s) {
    return s.model_state().get<abandoned_calls>().calls;
}

}  // namespace

void remember_abandoned(session& s, tracer::process& p, pid_t tid, std::uint64_t return_sp, std::uint64_t return_to,
                        const tracer::registers& caller, std::optional<std::uint64_t> step_over) {
    registry(s).push_back({p.pid(), tid, return_sp, return_to, caller, step_over});
    s.current_inferior().stacks.erase(tid);
}

std::optional<tracer::registers> abandoned_caller(session& s, pid_t tid, std::uint64_t pc, std::uint64_t sp) {
    tracer::process* p = s.process();
    if (p == nullptr || !p->is_alive()) {
        return std::nullopt;
    }
    for (const abandoned_call& c : registry(s)) {
        if (c.pid == p->pid() && c.tid == tid && c.return_to == pc && c.return_sp == sp) {
            return c.caller;
        }
    }
    return std::nullopt;
}

std::optional<tracer::registers> pop_abandoned_return(session& s, pid_t tid) {
    tracer::process* p = s.process();
    if (p == nullptr || !p->is_alive()) {
        return std::nullopt;
    }
    tracer::thread* t = p->find_thread(tid);
    if (t == nullptr) {
        return std::nullopt;
    }
    auto& calls = registry(s);
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
        if (it->pid != p->pid() || it->tid != tid || it->return_to != t->regs().pc() ||
            it->return_sp != t->regs().sp()) {
            continue;
        }
        tracer::registers returned = t->regs();
        t->write_regs(it->caller);
        p->set_step_over_pc(tid, it->step_over);
        p->remove_breakpoint_site(virt_addr(it->return_to));
        calls.erase(std::next(it).base());
        s.on_resume();
        return returned;
    }
    return std::nullopt;
}

bool finish_abandoned(session& s, const tracer::stop_reason& why) {
    tracer::process* p = s.process();
    if (p == nullptr || why.kind != tracer::stop_kind::breakpoint || !why.breakpoint_addr) {
        return false;
    }
    // Calls of processes that are gone are forgotten on the way.
    std::erase_if(registry(s), [&](const abandoned_call& c) { return c.pid == p->pid() && !p->is_alive(); });
    return pop_abandoned_return(s, why.tid).has_value();
}

}  // namespace ompdbg::debugger::infcall
