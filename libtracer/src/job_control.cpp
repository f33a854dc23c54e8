// A process attached in a job-control stop (ptrace_process::end_job_control_stop).
//
// Kernel behaviour this relies on (PTRACE_SEIZE, Linux 3.4+): a task seized while in a
// group-stop reports it as PTRACE_EVENT_STOP with SIGSTOP, and after PTRACE_CONT it
// reports the group-stop again as long as the stop is in effect for its thread group; the
// event loop then parks it with PTRACE_LISTEN, as an untraced stopped process would stay.
// Only a SIGCONT ends the stop. Sent while the task sits in a ptrace-stop, the SIGCONT
// ends the group-stop at once (that is done when it is generated, not delivered), queues
// a PTRACE_EVENT_STOP notification trap (resumed over by the event loop, as a stale
// interrupt) and leaves the signal itself to be delivered: its delivery-stop comes before
// the task runs any instruction of its own, and suppressing it there changes nothing.

#include "internal/process_impl.hpp"
#include "internal/ptrace_process.hpp"

#include <csignal>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer {

bool ptrace_process::was_job_control_stopped() const { return impl_->job_control_stopped; }

void ptrace_process::end_job_control_stop() {
    auto& d = *impl_;
    if (!d.job_control_stopped || !d.alive) {
        return;
    }
    d.job_control_stopped = false;
    if (pending_signal(d.pid) == SIGSTOP) {
        // The stop had not begun: not delivering its SIGSTOP is the SIGCONT.
        set_pending_signal(d.pid, 0);
        return;
    }
    if (::kill(d.pid, SIGCONT) != 0) {
        error::send_errno(fmt::format("Cannot continue process {} from its job-control stop", d.pid));
    }
    // Only the notification trap (which wait_for_stop resumes over itself) comes before
    // the delivery of SIGCONT: no code of the process runs until then. A few rounds are
    // plenty; anything else is logged and resumed over.
    for (int round = 0; round < 8; ++round) {
        resume();
        stop_reason why = wait_for_stop();
        if (why.kind == stop_kind::signal && why.signo == SIGCONT) {
            set_pending_signal(why.tid, 0);
            log::write(log::channel::ptrace, "process {}: job-control stop ended (SIGCONT absorbed)", d.pid);
            return;
        }
        if (why.is_process_end()) {
            error::send(fmt::format("Process {} ended while leaving its job-control stop.", d.pid));
        }
        log::write(log::channel::ptrace, "process {}: {} while leaving its job-control stop", d.pid,
                   static_cast<int>(why.kind));
    }
    error::send(fmt::format("Process {} did not leave its job-control stop.", d.pid));
}

}  // namespace ompdbg::tracer
