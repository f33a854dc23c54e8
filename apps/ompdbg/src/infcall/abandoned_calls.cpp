// The dummy frames of calls abandoned in a stop, and their silent end (abandoned_calls.hpp).

#include "infcall/abandoned_calls.hpp"

#include <algorithm>
#include <vector>

#include "session.hpp"

namespace ompdbg::app::infcall {

namespace {

struct abandoned_call {
    pid_t pid;
    pid_t tid;
    std::uint64_t return_sp;
    std::uint64_t return_to;
    tracer::registers caller;
    std::optional<std::uint64_t> step_over;
};

std::vector<abandoned_call>& registry() {
    static std::vector<abandoned_call> calls;
    return calls;
}

}  // namespace

void remember_abandoned(tracer::process& p, pid_t tid, std::uint64_t return_sp, std::uint64_t return_to,
                        const tracer::registers& caller, std::optional<std::uint64_t> step_over) {
    registry().push_back({p.pid(), tid, return_sp, return_to, caller, step_over});
}

bool finish_abandoned(session& s, const tracer::stop_reason& why) {
    tracer::process* p = s.process();
    if (p == nullptr || why.kind != tracer::stop_kind::breakpoint || !why.breakpoint_addr) {
        return false;
    }
    auto& calls = registry();
    // Calls of processes that are gone are forgotten on the way.
    std::erase_if(calls, [&](const abandoned_call& c) { return c.pid == p->pid() && !p->is_alive(); });
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
        if (it->pid != p->pid() || it->tid != why.tid || it->return_to != why.breakpoint_addr->addr()) {
            continue;
        }
        tracer::thread* t = p->find_thread(why.tid);
        if (t == nullptr || t->regs().sp() != it->return_sp) {
            continue;
        }
        t->write_regs(it->caller);
        p->set_step_over_pc(why.tid, it->step_over);
        p->remove_breakpoint_site(virt_addr(it->return_to));
        calls.erase(std::next(it).base());
        s.on_resume();
        return true;
    }
    return false;
}

}  // namespace ompdbg::app::infcall
