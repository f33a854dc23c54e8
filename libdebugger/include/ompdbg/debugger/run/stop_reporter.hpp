#pragma once
/// What stepping (run/stepping.hpp) needs of its front end: how stops are shown. The model
/// decides where a step ends and runs the target (run/run_control.hpp); the front end shows
/// the stop.

#include <sys/types.h>

#include <cstdint>
#include <string_view>

#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::debugger {

struct stack_frame;

/// Implemented by each front end (the CLI's in apps/ompdbg/src/cli_stop_reporter.*). Unlike
/// the session observer, its answers steer the step: a stop the front end does not show
/// (a breakpoint whose condition is false) makes the step go on.
class stop_reporter {
public:
    virtual ~stop_reporter() = default;
    /// A stop that interrupted the step (a signal, the process's end, another thread's
    /// breakpoint). Returns false when it is not a stop for the user: the step resumes.
    virtual bool stop(const tracer::stop_reason& why) = 0;
    /// The step ended at `pc` of thread `tid`, where user breakpoints are: returns true when
    /// one of them is shown as hit (and ends the step), false when none wants to stop.
    virtual bool breakpoint_hit(pid_t tid, std::uint64_t pc) = 0;
    /// The step ended normally in thread `tid` (selected by the model): gdb runs hook-stop
    /// and shows the location, with the frame line when `frame_line` (a new function).
    virtual void step_ended(pid_t tid, bool frame_line) = 0;
    /// The step left into code without line information that does not return to lines
    /// (main returning into libc): the front end runs the target on until its next stop,
    /// as gdb's step does.
    virtual void run_on() = 0;
    /// A step starts in `function` (gdb's "??" when it has no symbol), which has no line
    /// information: it runs until the function returns (gdb's "Single stepping until exit
    /// from function X, which has no line number information.").
    virtual void stepping_until_exit(std::string_view function) = 0;
    /// `finish` is about to run frame `f` of the selected thread to its return (gdb's "Run
    /// till exit from #0 ..."); called after the checks, before the target runs.
    virtual void finishing(const stack_frame& f) = 0;
};

}  // namespace ompdbg::debugger
