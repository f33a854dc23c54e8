#pragma once
/// The CLI's side of the model's stepping (ompdbg/debugger/run/stop_reporter.hpp): stops
/// shown as gdb shows them (stop_printer.hpp, hook-stop), and the target run by the CLI's
/// run control (run_control.hpp) until that moves into the library.

#include <sys/types.h>

#include <cstdint>
#include <string_view>

#include "ompdbg/debugger/run/stop_reporter.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

class session;

/// Shows a step's stops on the session's output, as gdb prints them.
class cli_stop_reporter final : public debugger::stop_reporter {
public:
    explicit cli_stop_reporter(session& s) : s_(s) {}
    bool stop(const tracer::stop_reason& why) override;
    bool breakpoint_hit(pid_t tid, std::uint64_t pc) override;
    void step_ended(pid_t tid, bool frame_line) override;
    void run_on() override;
    void stepping_until_exit(std::string_view function) override;
    void finishing(const debugger::stack_frame& f) override;

private:
    session& s_;
};

/// Temporary: the model's stepping runs the target through the CLI's resume_and_wait and
/// step_one_instruction (which also wait inside a rank's fiber, mpi_step.hpp). Replaced
/// by the library's run control once it moves to libdebugger/run.
class cli_run_host final : public debugger::run_host {
public:
    explicit cli_run_host(session& s) : s_(s) {}
    tracer::stop_reason resume_and_wait(bool quick_hits) override;
    tracer::stop_reason step_one_instruction(pid_t tid) override;

private:
    session& s_;
};

}  // namespace ompdbg::app
