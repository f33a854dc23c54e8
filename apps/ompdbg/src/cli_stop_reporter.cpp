#include "cli_stop_reporter.hpp"

#include <fmt/format.h>

#include "frame_line.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"

namespace ompdbg::app {

bool cli_stop_reporter::stop(const tracer::stop_reason& why) {
    return report_stop(s_, why);
}

bool cli_stop_reporter::breakpoint_hit(pid_t tid, std::uint64_t pc) {
    return report_breakpoint_hit(s_, tid, pc);
}

void cli_stop_reporter::step_ended(pid_t tid, bool frame_line) {
    run_stop_hook(s_);
    print_location(s_, tid, frame_line);
}

void cli_stop_reporter::run_on() {
    continue_until_stop(s_);
}

void cli_stop_reporter::stepping_until_exit(std::string_view function) {
    s_.out().line(fmt::format("Single stepping until exit from function {},\nwhich has no line number information.",
                              function));
}

void cli_stop_reporter::finishing(const debugger::stack_frame& f) {
    if (!s_.is_batch()) {
        s_.out().line("Run till exit from " + format_frame_line(s_, f, true));
    }
}

}  // namespace ompdbg::app
