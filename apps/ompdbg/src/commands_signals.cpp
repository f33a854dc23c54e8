// Signals: `handle SIGNAL... ACTION...`, `info signals [SIGNAL]`, `signal SIGNAL`.
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "stop_printer.hpp"
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

}  // namespace

void register_signal_commands(command_table& t) {
    t.add(command{"handle", {}, "Specify how to handle signals.",
                  "handle SIGNAL... [stop|nostop|print|noprint|pass|nopass]...\n"
                  "SIGNAL is a name (SIGUSR1), a number 1-15, or `all`. stop implies print, noprint\n"
                  "implies nostop; pass delivers the signal to the program when it resumes.",
                  cmd_handle, false, nullptr});
    t.add(command{"signal", {}, "Continue program with the specified signal.",
                  "signal SIGNAL\nResumes the program, delivering SIGNAL (0: none) to the selected thread.",
                  cmd_signal, false, nullptr});
    command_table& info = prefix_table(t, "info", "Generic command for showing things about the program being debugged.");
    info.add(command{"signals", {"handle"}, "What debugger does when program gets various signals.",
                     "info signals [SIGNAL]\nThe stop/print/pass table of every signal, or of one.",
                     cmd_info_signals, false, nullptr});
}

}  // namespace ompdbg::app
