#pragma once
/// The CLI's side of the model's stepping (ompdbg/debugger/run/stop_reporter.hpp): stops
/// shown as gdb shows them (stop_printer.hpp, hook-stop).

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

}  // namespace ompdbg::app
