// The model's evaluation hooks in the CLI: stops shown as gdb shows them (cli_eval_hooks.hpp).

#include "cli_eval_hooks.hpp"

#include "commands_signals.hpp"
#include "commands_watch.hpp"
#include "session.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"

namespace ompdbg::app {

// The same rendering as report_stop (run_control.cpp), for a stop the model decided already
// (a call's: deciding again would count its hits twice).
bool show_stop(session& s, const debugger::stop_report& r) {
    using debugger::stop_class;
    switch (r.kind) {
    case stop_class::process_ended:
        report_process_end(s, r);
        return true;
    case stop_class::abandoned_call_done:
        return true;   // gdb stops silently where a call abandoned earlier returns
    case stop_class::watchpoint_scope:
        report_watchpoint_scope(s, r);
        return true;
    case stop_class::breakpoint_hit:
        return report_breakpoint_hit(s, r.tid, r.pc, r.breakpoint);
    case stop_class::watchpoint_hit:
        report_watchpoint_hit(s, r);
        return true;
    case stop_class::interrupt:
    case stop_class::signal:
        report_signal(s, r.why);
        return true;
    case stop_class::process_event:
        report_process_event(s, r);
        return true;
    case stop_class::step:
        switch_to_stopped_thread(s, r.tid);
        run_stop_hook(s);
        print_location(s, r.tid, true);
        return true;
    case stop_class::not_for_user:
        break;
    }
    return false;
}

}  // namespace ompdbg::app
