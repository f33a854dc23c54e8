// Signals: `handle SIGNAL... ACTION...`, `info signals [SIGNAL]`, `signal SIGNAL`; process
// events: `catch fork|vfork|exec|syscall`, `set follow-fork-mode`, `set detach-on-fork`.
#include "commands_signals.hpp"
#include "ompdbg/debugger/run/siginfo_type.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <charconv>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "ompdbg/debugger/run/syscall_table.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

std::vector<std::string> words(std::string_view args) {
    std::istringstream in{std::string(args)};
    std::vector<std::string> out;
    std::string w;
    while (in >> w) {
        out.push_back(w);
    }
    return out;
}

const char* yes_no(bool b) { return b ? "Yes" : "No"; }

constexpr const char* table_header = "Signal        Stop\tPrint\tPass to program\tDescription";

std::string table_row(const signal_row& r) {
    return fmt::format("{:<13} {}\t{}\t{}\t\t{}", r.name, yes_no(r.stop), yes_no(r.print), yes_no(r.pass),
                       r.description);
}

nlohmann::json row_json(const signal_row& r) {
    return {{"signal", r.name}, {"stop", r.stop}, {"print", r.print}, {"pass", r.pass}, {"description", r.description}};
}

/// `handle SIGNAL... ACTION...`: gdb's rules — stop implies print, noprint implies nostop;
/// `all` is every signal but the debugger's own (SIGINT, SIGTRAP); changing those asks.
void cmd_handle(session& s, std::string_view args) {
    auto w = words(args);
    if (w.empty()) {
        error::send("Argument required (signal and action to apply).");
    }
    auto& policy = s.signals();
    std::vector<signal_row*> targets;
    std::vector<std::string> actions;
    for (const auto& word : w) {
        std::string lower;
        for (char c : word) {
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        static const char* action_words[] = {"stop", "nostop", "print", "noprint", "pass", "nopass", "ignore", "noignore"};
        bool is_action = false;
        for (const char* a : action_words) {
            is_action = is_action || lower == a;
        }
        if (is_action) {
            actions.push_back(lower);
            continue;
        }
        if (lower == "all") {
            for (const auto& r : policy.rows()) {
                if (r.name != "SIGINT" && r.name != "SIGTRAP") {
                    targets.push_back(policy.find(r.name));
                }
            }
            continue;
        }
        signal_row* r = policy.find(word);
        if (r == nullptr) {
            if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0]))) {
                error::send("Only signals 1-15 are valid as numeric signals.\nUse \"info signals\" for a list of symbolic signals.");
            }
            error::send(fmt::format("Unrecognized or ambiguous flag word: \"{}\".", word));
        }
        targets.push_back(r);
    }
    for (auto* r : targets) {
        if (!actions.empty() && (r->name == "SIGINT" || r->name == "SIGTRAP")) {
            if (!s.query(fmt::format("{} is used by the debugger.\nAre you sure you want to change it? ", r->name))) {
                error::send("Not confirmed, unchanged.");
            }
        }
        for (const auto& a : actions) {
            if (a == "stop") {
                r->stop = r->print = true;
            } else if (a == "nostop") {
                r->stop = false;
            } else if (a == "print") {
                r->print = true;
            } else if (a == "noprint") {
                r->print = r->stop = false;
            } else if (a == "pass" || a == "noignore") {
                r->pass = true;
            } else {
                r->pass = false;
            }
        }
    }
    s.out().line(table_header);
    nlohmann::json list = nlohmann::json::array();
    for (auto* r : targets) {
        s.out().line(table_row(*r));
        list.push_back(row_json(*r));
    }
    s.out().field("signals", list);
}

void cmd_info_signals(session& s, std::string_view args) {
    auto w = words(args);
    auto& policy = s.signals();
    nlohmann::json list = nlohmann::json::array();
    if (!w.empty()) {
        signal_row* r = policy.find(w.front());
        if (r == nullptr) {
            error::send(fmt::format("Only signals 1-15 are valid as numeric signals.\nUse \"info signals\" for a list "
                                    "of symbolic signals."));
        }
        s.out().line(table_header);
        s.out().line(table_row(*r));
        s.out().field("signals", nlohmann::json::array({row_json(*r)}));
        return;
    }
    s.out().line(table_header);
    s.out().line("");
    for (const auto& r : policy.rows()) {
        s.out().line(table_row(r));
        list.push_back(row_json(r));
    }
    s.out().line("");
    s.out().line("Use the \"handle\" command to change these tables.");
    s.out().field("signals", list);
}

/// `signal SIG`: resumes with SIG delivered to the selected thread (0: with none).
void cmd_signal(session& s, std::string_view args) {
    auto w = words(args);
    if (w.empty()) {
        error::send("Argument required (signal number).");
    }
    auto& p = s.require_process();
    int signo = 0;
    if (w.front() != "0") {
        const signal_row* r = s.signals().find(w.front());
        if (r == nullptr || r->host == 0) {
            error::send(fmt::format("Only signals 1-15 are valid as numeric signals.\nUse \"info signals\" for a "
                                    "list of symbolic signals."));
        }
        signo = r->host;
    }
    pid_t tid = s.selected_tid();
    // gdb: the signal replaces whatever the thread would have received.
    p.set_pending_signal(tid, signo);
    s.out().line(signo == 0 ? std::string("Continuing with no signal.")
                            : fmt::format("Continuing with signal {}.", signal_name(signo)));
    continue_until_stop(s);
}

void add_event_catchpoint(session& s, const std::string& what) {
    event_catchpoint c;
    c.number = s.next_breakpoint_number();
    c.what = what;
    s.process_events().catchpoints.push_back(c);
    s.out().field("catchpoint", {{"number", c.number}, {"event", what}});
    s.out().line(fmt::format("Catchpoint {} ({})", c.number, what));
}

/// gdb's name of a system call in messages: the name, or the number when it has none.
std::string syscall_label(int number) {
    auto name = syscall_name(number);
    return name ? std::string(*name) : std::to_string(number);
}

/// `catch syscall [NAME|NUMBER]...`: gdb's messages ("Catchpoint 2 (syscall 'write' [1])",
/// "(syscalls 'write' [1] 'read' [0])", "(any syscall)"); unknown names are refused.
void cmd_catch_syscall(session& s, std::string_view args) {
    event_catchpoint c;
    c.what = "syscall";
    for (const auto& w : words(args)) {
        if (w.rfind("group:", 0) == 0 || w.rfind("g:", 0) == 0) {
            error::send(fmt::format("Unknown syscall group '{}'.", w.substr(w.find(':') + 1)));
        }
        int number = 0;
        auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), number);
        if (ec == std::errc() && ptr == w.data() + w.size()) {
            if (number < 0) {
                error::send(fmt::format("Unknown syscall number '{}'.", number));
            }
            c.syscalls.push_back(number);
            continue;
        }
        auto n = syscall_number(w);
        if (!n) {
            error::send(fmt::format("Unknown syscall name '{}'.", w));
        }
        c.syscalls.push_back(*n);
    }
    c.number = s.next_breakpoint_number();
    std::string text;
    if (c.syscalls.empty()) {
        text = "any syscall";
    } else {
        text = c.syscalls.size() == 1 ? "syscall" : "syscalls";
        for (int n : c.syscalls) {
            auto name = syscall_name(n);
            text += name ? fmt::format(" '{}' [{}]", *name, n) : fmt::format(" {}", n);
        }
    }
    nlohmann::json list = nlohmann::json::array();
    for (int n : c.syscalls) {
        list.push_back(syscall_label(n));
    }
    s.out().field("catchpoint", {{"number", c.number}, {"event", "syscall"}, {"syscalls", list}});
    s.out().line(fmt::format("Catchpoint {} ({})", c.number, text));
    s.process_events().catchpoints.push_back(std::move(c));
}

void cmd_follow_fork_mode(session& s, std::string_view args) {
    auto w = words(args);
    if (w.size() != 1 || (w[0] != "parent" && w[0] != "child")) {
        error::send("Requires an argument. Valid arguments are child, parent.");
    }
    s.process_events().follow_child = w[0] == "child";
}

void cmd_detach_on_fork(session& s, std::string_view args) {
    auto w = words(args);
    if (w.size() != 1 || (w[0] != "on" && w[0] != "off")) {
        error::send("\"on\" or \"off\" expected.");
    }
    s.process_events().detach_on_fork = w[0] == "on";
}

}  // namespace

std::vector<info_breakpoint_row> catchpoint_rows(session& s) {
    std::vector<info_breakpoint_row> rows;
    for (const auto& c : s.process_events().catchpoints) {
        info_breakpoint_row r;
        r.number = c.number;
        r.type = "catchpoint";
        r.enabled = c.enabled;
        if (c.what == "syscall") {
            // gdb: syscall "write" , syscalls "write, read" , syscall "<any syscall>"
            std::string names;
            for (int n : c.syscalls) {
                names += (names.empty() ? "" : ", ") + syscall_label(n);
            }
            r.what = fmt::format("{} \"{}\" ", c.syscalls.size() > 1 ? "syscalls" : "syscall",
                                 c.syscalls.empty() ? "<any syscall>" : names);
        } else {
            r.what = c.last_event.empty() ? c.what : fmt::format("{}, {} ", c.what, c.last_event);
        }
        if (c.hit_count > 0) {
            r.details.push_back(
                fmt::format("\tcatchpoint already hit {} time{}", c.hit_count, c.hit_count == 1 ? "" : "s"));
        }
        r.json = {{"number", c.number}, {"type", "catchpoint"}, {"event", c.what}, {"enabled", c.enabled}, {"hits", c.hit_count}};
        if (c.what == "syscall") {
            nlohmann::json list = nlohmann::json::array();
            for (int n : c.syscalls) {
                list.push_back(syscall_label(n));
            }
            r.json["syscalls"] = list;
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

bool delete_catchpoint(session& s, int number) {
    auto& list = s.process_events().catchpoints;
    auto it = std::find_if(list.begin(), list.end(), [&](const event_catchpoint& c) { return c.number == number; });
    if (it == list.end()) {
        return false;
    }
    list.erase(it);
    return true;
}

void delete_all_catchpoints(session& s) { s.process_events().catchpoints.clear(); }

bool enable_catchpoint(session& s, int number, bool enable) {
    event_catchpoint* c = s.process_events().by_number(number);
    if (c == nullptr) {
        return false;
    }
    c->enabled = enable;
    return true;
}

void report_process_event(session& s, const debugger::stop_report& r) {
    const tracer::stop_reason& why = r.why;
    switch_to_stopped_thread(s, why.tid);
    const event_catchpoint* c = s.process_events().by_number(r.catchpoint);
    if (r.catchpoint == 0 || c == nullptr) {
        return;
    }
    std::string what;
    if (why.kind == tracer::stop_kind::exec) {
        what = fmt::format("exec'd {}", s.process() ? s.process()->executable().string() : std::string());
    } else if (why.kind == tracer::stop_kind::fork) {
        what = fmt::format("{} process {}", why.is_vfork ? "vforked" : "forked", why.new_tid);
    } else {
        what = fmt::format("{} syscall {}", why.kind == tracer::stop_kind::syscall_entry ? "call to" : "returned from",
                           syscall_label(why.syscall_number));
    }
    std::string text = fmt::format("\nCatchpoint {} ({}), ", c->number, what);
    std::string src;
    try {
        auto& frames = s.stack(why.tid);
        if (!frames.empty()) {
            text += format_frame_line(s, frames.front(), false);
            src = source_line_for(s, frames.front());
        }
    } catch (const std::exception& e) {
        text += fmt::format("<error: {}>", e.what());
    }
    if (!src.empty()) {
        text += "\n" + src;
    }
    nlohmann::json j{{"catchpoint", c->number}, {"event", c->what}, {"thread", s.thread_number(why.tid)}};
    if (why.kind == tracer::stop_kind::fork) {
        j["child"] = why.new_tid;
    }
    if (why.syscall_number >= 0) {
        j["syscall"] = syscall_label(why.syscall_number);
        j["phase"] = why.kind == tracer::stop_kind::syscall_entry ? "call" : "return";
    }
    s.out().event("catchpoint-hit", j, text);
}

void register_signal_commands(command_table& t) {
    t.add(command{"handle", {}, "Specify how to handle signals.",
                  "handle SIGNAL... [stop|nostop|print|noprint|pass|nopass]...\n"
                  "SIGNAL is a name (SIGUSR1), a number 1-15, or `all`. stop implies print, noprint\n"
                  "implies nostop; pass delivers the signal to the program when it resumes.",
                  cmd_handle, false, nullptr});
    t.add(command{"signal", {}, "Continue program with the specified signal.",
                  "signal SIGNAL\nResumes the program, delivering SIGNAL (0: none) to the selected thread.",
                  cmd_signal, false, nullptr});
    command_table& catch_table = prefix_table(t, "catch", "Set catchpoints to catch events.");
    for (const char* what : {"fork", "vfork", "exec"}) {
        std::string w = what;
        catch_table.add(command{w, {}, "Catch calls to " + w + ".",
                                "catch " + w + "\nStops the program when it calls " + w +
                                    " (the child of a fork is not followed: it runs on detached).",
                                [w](session& s, std::string_view) { add_event_catchpoint(s, w); }, false, nullptr});
    }
    catch_table.add(command{"syscall", {}, "Catch system calls by their names, groups and/or numbers.",
                            "catch syscall [NAME|NUMBER]...\nStops the program when it enters and when it returns from "
                            "the\nnamed system calls (x86-64 names, as in gdb), or from any system call.",
                            cmd_catch_syscall, false, nullptr});
    command_table& set = prefix_table(t, "set", "Evaluate expression EXP and assign result to variable VAR.");
    set.add(command{"follow-fork-mode", {}, "Set debugger response to a program call of fork or vfork.",
                    "set follow-fork-mode parent|child\nAfter a fork, debug the parent (default) or the child (a new inferior; "
                    "a vfork parent is held until its child execs or exits).",
                    cmd_follow_fork_mode, false, nullptr});
    set.add(command{"detach-on-fork", {}, "Set whether gdb will detach the child of a fork.",
                    "set detach-on-fork on|off\non (default): the process not followed after a fork runs on detached; off: it "
                    "stays a stopped inferior (see info inferiors, inferior N).",
                    cmd_detach_on_fork, false, nullptr});
    command_table& info = prefix_table(t, "info", "Generic command for showing things about the program being debugged.");
    info.add(command{"signals", {"handle"}, "What debugger does when program gets various signals.",
                     "info signals [SIGNAL]\nThe stop/print/pass table of every signal, or of one.",
                     cmd_info_signals, false, nullptr});
}

}  // namespace ompdbg::app
