#include "stepping.hpp"

#include <fmt/format.h>

#include "cli_stop_reporter.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app {

void step_lines(session& s, step_mode mode, int count) {
    cli_stop_reporter report(s);
    debugger::step_lines(s, report, mode, count);
}

void step_instructions(session& s, bool over_calls, int count) {
    cli_stop_reporter report(s);
    debugger::step_instructions(s, report, over_calls, count);
}

void finish_frame(session& s) {
    cli_stop_reporter report(s);
    auto result = debugger::finish_frame(s, report);
    if (!result.value) {
        return;
    }
    // gdb's "Value returned is $N = ..." after the caller's location, in the value history.
    auto ctx = frame_context::for_selection(s);
    std::string text = dwarf::format_value(*result.value, ctx, s.settings().print);
    int n = s.record_value(*result.value);
    s.out().line(fmt::format("Value returned is ${} = {}", n, text));
    s.out().field("return_value", text);
}

void run_until_location(session& s, std::string_view location) {
    cli_stop_reporter report(s);
    debugger::run_until_location(s, report, location);
}

}  // namespace ompdbg::app
