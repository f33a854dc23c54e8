// The model's side of a stop (run/stop_decision.hpp), in the order the CLI has always done
// it: the agent's counters first (hit and ignore counts as they are at this stop), then
// what the stop's kind asks.
#include "ompdbg/debugger/run/stop_decision.hpp"

#include <csignal>
#include <string>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/infcall/abandoned_calls.hpp"
#include "ompdbg/debugger/run/fork_follow.hpp"
#include "ompdbg/debugger/run/signal_policy.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/process.hpp"

namespace ompdbg::debugger {

namespace {

/// The process ended: a followed vfork child releases its parent, and gdb's $_exitcode /
/// $_exitsignal say how (one holds the value, the other is void).
void decide_process_end(session& s, stop_report& r) {
    vfork_child_done(s, "exit");
    r.kind = stop_class::process_ended;
    r.pid = s.process() ? s.process()->pid() : r.why.tid;
    set_convenience_variable(s, "_exitcode", std::nullopt);
    set_convenience_variable(s, "_exitsignal", std::nullopt);
    if (r.why.kind == tracer::stop_kind::exited) {
        set_convenience_variable(s, "_exitcode", int_value(r.why.exit_code));
    } else {
        set_convenience_variable(s, "_exitsignal", int_value(r.why.signo));
    }
}

/// A breakpoint trap: an abandoned call's return, watchpoints whose frame returned here,
/// or user breakpoints (their decision counts the hits, so it is made once, here).
void decide_breakpoint(session& s, stop_report& r) {
    if (infcall::finish_abandoned(s, r.why)) {
        r.kind = stop_class::abandoned_call_done;
        return;
    }
    std::uint64_t addr = r.why.breakpoint_addr ? r.why.breakpoint_addr->addr() : 0;
    if (!addr) {
        if (auto* t = s.process()->find_thread(r.tid)) {
            addr = t->regs().pc();
        }
    }
    r.pc = addr;
    r.watchpoints_ended = watchpoints_out_of_scope(s, r.tid, addr);
    if (!r.watchpoints_ended.empty()) {
        r.kind = stop_class::watchpoint_scope;
        return;
    }
    r.kind = stop_class::breakpoint_hit;
    r.breakpoint = decide_breakpoint_hit(s, r.tid, addr);
}

/// exec, fork/vfork, a system call: the enabled catchpoint that catches it counts a hit
/// and remembers what it caught (`info breakpoints`).
void decide_process_event(session& s, stop_report& r) {
    r.kind = stop_class::process_event;
    const tracer::stop_reason& why = r.why;
    event_catchpoint* c = nullptr;
    if (why.kind == tracer::stop_kind::exec) {
        c = s.process_events().find("exec");
    } else if (why.kind == tracer::stop_kind::fork) {
        c = s.process_events().find(why.is_vfork ? "vfork" : "fork");
    } else {
        for (auto& candidate : s.process_events().catchpoints) {
            if (c == nullptr && candidate.enabled && candidate.catches_syscall(why.syscall_number)) {
                c = &candidate;
            }
        }
    }
    if (c == nullptr) {
        return;
    }
    ++c->hit_count;
    if (why.kind == tracer::stop_kind::fork) {
        c->last_event = fmt::format("process {}", why.new_tid);
    } else if (why.kind == tracer::stop_kind::exec) {
        c->last_event = fmt::format("program \"{}\"", s.process() ? s.process()->executable().string() : std::string());
    }
    r.catchpoint = c->number;
}

}  // namespace

stop_report decide_stop(session& s, const tracer::stop_reason& why) {
    using tracer::stop_kind;
    stop_report r;
    r.why = why;
    r.tid = why.tid;
    collect_fast_counters(s);   // hit counts and ignore counts as they are at this stop
    switch (why.kind) {
    case stop_kind::exited:
    case stop_kind::terminated:
        decide_process_end(s, r);
        break;
    case stop_kind::breakpoint:
        decide_breakpoint(s, r);
        break;
    case stop_kind::watchpoint:
        r.watchpoint = decide_watchpoint_hit(s, why);
        if (r.watchpoint) {
            r.kind = stop_class::watchpoint_hit;
        }
        break;
    case stop_kind::interrupted:
        r.kind = stop_class::interrupt;
        r.why.signo = SIGINT;
        break;
    case stop_kind::signal:
        if (!s.signals().passes(why.signo)) {
            // `handle SIG nopass` (SIGINT and SIGTRAP by default: they are the debugger's).
            s.process()->set_pending_signal(why.tid, 0);
        }
        r.kind = stop_class::signal;
        break;
    case stop_kind::exec:
    case stop_kind::fork:
    case stop_kind::syscall_entry:
    case stop_kind::syscall_exit:
        decide_process_event(s, r);
        break;
    case stop_kind::single_step:
        r.kind = stop_class::step;
        break;
    default:
        break;
    }
    return r;
}

}  // namespace ompdbg::debugger
