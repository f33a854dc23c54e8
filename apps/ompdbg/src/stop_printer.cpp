#include "stop_printer.hpp"

#include "ompdbg/debugger/breakpoints/breakpoint_hits.hpp"

#include "commands_inferiors.hpp"
#include "commands_signals.hpp"
#include "commands_watch.hpp"
#include "command_block.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "command_args.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/stack/inline_frames.hpp"
#include "frame_line.hpp"
#include "user_hooks.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"

namespace ompdbg::app {

namespace {

std::string thread_label(session& s, pid_t tid) {
    std::string name;
    if (auto* p = s.process()) {
        if (auto* t = p->find_thread(tid)) {
            name = t->name();
        }
    }
    // gdb qualifies thread numbers with the inferior once there are several ("2.1").
    std::string number = qualified_thread_numbers(s)
                             ? fmt::format("{}.{}", current_inferior_number(s), s.thread_number(tid))
                             : std::to_string(s.thread_number(tid));
    if (name.empty()) {
        return fmt::format("Thread {}", number);
    }
    return fmt::format("Thread {} \"{}\"", number, name);
}

/// The source line a stop shows for `f`: the file's text, the error about a missing file, or
/// "N\tin FILE" when the line cannot be read at all; nothing without line information.
std::optional<source_line> stop_source_line(session& s, const stack_frame& f) {
    if (!f.line || f.line->line <= 0) {
        return std::nullopt;
    }
    if (auto text = frame_source_line(s, f)) {
        return text;
    }
    return source_line{fmt::format("{}\tin {}", f.line->line, f.line->file)};
}

}  // namespace

std::string source_line_for(session& s, const stack_frame& f) {
    auto src = stop_source_line(s, f);
    return src ? src->text : std::string();
}

void event_with_source(session& s, const std::string& kind, nlohmann::json fields, std::string text,
                       const stack_frame& f) {
    std::optional<source_line> src = stop_source_line(s, f);
    bool apart = src && src->is_error && !s.out().is_json();
    if (src && !apart) {
        text += "\n" + src->text;
    }
    s.out().event(kind, std::move(fields), text);
    if (apart) {
        s.out().error(src->text);
    }
}

void print_location(session& s, pid_t tid, bool frame_line) {
    auto& frames = s.innermost_frames(tid);
    if (frames.empty()) {
        return;
    }
    const auto& f = frames.front();
    std::string text;
    nlohmann::json j{{"thread", s.thread_number(tid)}, {"pc", fmt::format("{:#x}", f.pc())}};
    if (f.function) {
        j["function"] = f.function->name;
    }
    if (f.line) {
        j["file"] = f.line->file;
        j["line"] = f.line->line;
    }
    if (frame_line) {
        event_with_source(s, "location", std::move(j), format_frame_line(s, f, false), f);
        return;
    }
    std::string src = source_line_for(s, f);
    if (src.empty()) {
        text = format_frame_line(s, f, false);
    } else if (!pc_starts_statement(f)) {
        text = fmt::format("0x{:016x}\t{}", f.pc(), src);
    } else {
        text = src;
    }
    s.out().event("location", j, text);
}

std::string stop_thread_label(session& s, pid_t tid) { return thread_label(s, tid); }

void switch_to_stopped_thread(session& s, pid_t tid) {
    s.refresh_thread_numbers();
    if (s.selected_tid() != tid && (s.multi_threaded() || qualified_thread_numbers(s))) {
        s.out().event("thread-selected", {{"thread", s.thread_number(tid)}},
                      fmt::format("[Switching to {}]", s.thread_target_id(tid)));
    }
    s.select_thread(tid);
}

void report_process_end(session& s, const debugger::stop_report& r) {
    const tracer::stop_reason& why = r.why;
    const pid_t pid = r.pid;
    if (why.kind == tracer::stop_kind::exited) {
        std::string text = why.exit_code == 0
                               ? fmt::format("[Inferior {} (process {}) exited normally]", current_inferior_number(s), pid)
                               : fmt::format("[Inferior {} (process {}) exited with code {:02o}]",
                                             current_inferior_number(s), pid, why.exit_code);
        s.out().event("exited", {{"pid", pid}, {"exit_code", why.exit_code}}, text);
    } else {
        s.out().event("terminated", {{"pid", pid}, {"signal", signal_name(why.signo)}},
                      fmt::format("\nProgram terminated with signal {}, {}.\nThe program no longer exists.",
                                  signal_name(why.signo), signal_description(why.signo)));
    }
    s.drop_process();
    run_stop_hook(s);   // gdb runs it after the exit is told
}

void report_signal(session& s, const tracer::stop_reason& why) {
    switch_to_stopped_thread(s, why.tid);
    run_stop_hook(s);
    std::string who = s.multi_threaded() ? thread_label(s, why.tid) : "Program";
    s.out().event("signal", {{"thread", s.thread_number(why.tid)}, {"signal", signal_name(why.signo)}},
                  fmt::format("\n{} received signal {}, {}.", who, signal_name(why.signo),
                              signal_description(why.signo)));
    print_location(s, why.tid, true);
}

namespace {
/// `silent`, then only `printf` or `echo` lines, then `continue`: a hit that counts or
/// traces from its own thread's frame, which the other threads need not stop for.
bool traces_and_continues(const std::vector<std::string>& commands) {
    if (commands.size() < 2 || trim(commands.front()) != "silent") {
        return false;
    }
    auto c = trim(commands.back());
    if (c != "continue" && c != "c" && c != "cont" && c != "fg") {
        return false;
    }
    for (std::size_t i = 1; i + 1 < commands.size(); ++i) {
        auto line = trim(commands[i]);
        auto word = line.substr(0, line.find_first_of(" \t\""));
        if (word != "printf" && word != "echo") {
            return false;
        }
    }
    return true;
}
/// A breakpoint's `commands` (`silent` aside), until one resumes the program or ends it.
void run_breakpoint_commands(session& s, const std::vector<std::string>& commands) {
    auto& st = s.bp_commands_state();
    const bool was = st.in_breakpoint_commands;
    st.in_breakpoint_commands = true;
    std::vector<std::string> body;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        if (!(i == 0 && commands[i] == "silent")) {
            body.push_back(commands[i]);
        }
    }
    try {
        // An error ends the commands of this breakpoint, as in gdb; they may hold if/while.
        run_lines(s, body, [&] { return st.resume_requested || !s.process(); });
    } catch (const std::exception& e) {
        s.out().error(e.what());
    }
    st.in_breakpoint_commands = was;
}

/// A dprintf's printf runs in the thread that hit it, as gdb's does, without making it the
/// selected thread (no stop is shown, so no "[Switching to ...]" either).
void run_dprintf_commands(session& s, pid_t tid, const std::vector<std::vector<std::string>>& printing) {
    const pid_t selected_tid = s.selected_tid();
    const int selected_frame = s.selected_frame();
    s.select_thread(tid);
    for (const auto& commands : printing) {
        run_breakpoint_commands(s, commands);
    }
    if (s.process() && s.process()->find_thread(selected_tid)) {
        s.select_thread(selected_tid);
        s.select_frame(selected_frame);
    }
}
}  // namespace

bool report_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr) {
    return report_breakpoint_hit(s, tid, addr, decide_breakpoint_hit(s, tid, addr));
}

bool report_breakpoint_hit(session& s, pid_t tid, std::uint64_t addr, const breakpoint_hit_decision& hit) {
    if (!hit.dprintfs.empty()) {
        std::vector<std::vector<std::string>> printing;   // the commands of the dprintfs hit
        for (int n : hit.dprintfs) {
            if (auto it = s.breakpoints().find(n); it != s.breakpoints().end()) {
                printing.push_back(it->second.commands);
            }
        }
        run_dprintf_commands(s, tid, printing);
    }
    if (!hit.stops()) {
        return false;
    }
    const std::vector<int>& stopping = hit.stopping;
    const std::size_t first_location = hit.first_location;
    auto& first = s.breakpoints().at(stopping.front());
    if (!traces_and_continues(first.commands)) {
        // A hit reported early by `continue` (the other threads still running, see
        // resume_and_wait) that the user sees, or whose commands may look at other threads.
        s.process()->stop_others();
    }
    set_hidden_inline_frames(s, tid, hit.hidden_inline_frames);
    switch_to_stopped_thread(s, tid);
    for (auto& e : hit.condition_errors) {
        s.out().error(e);
    }
    run_stop_hook(s);   // gdb's normal_stop: before the stop is printed
    bool silent = !first.commands.empty() && first.commands.front() == "silent";
    if (!silent) {
        std::string who =
            s.multi_threaded() || qualified_thread_numbers(s) ? thread_label(s, tid) + " hit " : std::string();
        std::string kind = first.temporary ? "Temporary breakpoint" : "Breakpoint";
        auto& frames = s.innermost_frames(tid);
        // gdb's print_num_locno: "Breakpoint 1.2, " names the location hit when the
        // breakpoint has several, "Breakpoint 1, " when it has one.
        std::string number = first.locations.size() > 1
                                 ? fmt::format("{}.{}", first.number, first_location + 1)
                                 : std::to_string(first.number);
        std::string text = fmt::format("\n{}{} {}, ", who, kind, number);
        if (first.describe_hit) {
            text = fmt::format("\n{}Catchpoint {} ({}), {}", who, first.number, first.catch_what,
                               first.describe_hit(tid));
        } else if (!frames.empty()) {
            text += format_frame_line(s, frames.front(), false);
        }
        nlohmann::json fields{{"breakpoint", first.number},
                              {"location", static_cast<int>(first_location) + 1},
                              {"thread", s.thread_number(tid)},
                              {"pc", fmt::format("{:#x}", addr)}};
        if (!first.describe_hit && !frames.empty()) {
            event_with_source(s, "breakpoint-hit", std::move(fields), text, frames.front());
        } else {
            s.out().event("breakpoint-hit", std::move(fields), text);
        }
    }
    std::vector<std::string> commands = first.commands;
    end_temporary_breakpoints(s, stopping);
    run_breakpoint_commands(s, commands);
    return true;
}

// Every stop the CLI shows comes here once decided (report_stop, a stop during a call): the
// model decided it already, and deciding again would count its hits twice.
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
