// info threads, thread [N], thread apply (all | N...) COMMAND.
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "command_args.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// A live process or a core file: something with threads.
bool has_threads(session& s) {
    return s.target() != nullptr && (!s.target()->is_live() || s.process()->is_alive());
}

/// "Thread 0x7ffff7d8b740 (LWP 1234) \"threads\"" as in gdb's Target Id column.
std::string target_id_with_name(session& s, pid_t tid) {
    std::string id = s.thread_target_id(tid);
    s.thread_ids()[tid] = id;
    std::string name;
    if (auto* t = s.target()->find_thread(tid)) {
        name = t->name();
    }
    return name.empty() ? id : fmt::format("{} \"{}\"", id, name);
}

std::string frame0_text(session& s, pid_t tid) {
    try {
        auto& frames = s.stack(tid);
        if (frames.empty()) {
            return "(no frames)";
        }
        return format_frame_line(s, frames.front(), false);
    } catch (const std::exception& e) {
        return fmt::format("<error: {}>", e.what());
    }
}

void info_threads(session& s, std::string_view args) {
    if (!has_threads(s)) {
        s.out().line("No threads.");
        return;
    }
    s.refresh_thread_numbers();
    std::vector<int> only;
    {
        std::istringstream in{std::string(args)};
        std::string tok;
        while (in >> tok) {
            try {
                only.push_back(std::stoi(tok));
            } catch (const std::logic_error&) {
                error::send(fmt::format("Invalid thread ID: {}", tok));
            }
        }
    }
    struct row {
        int number;
        pid_t tid;
        std::string id;
        std::string frame;
    };
    std::vector<row> rows;
    for (auto* t : s.target()->threads()) {
        int n = s.thread_number(t->tid());
        if (!only.empty() && std::find(only.begin(), only.end(), n) == only.end()) {
            continue;
        }
        rows.push_back({n, t->tid(), target_id_with_name(s, t->tid()), frame0_text(s, t->tid())});
    }
    std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.number < b.number; });
    if (rows.empty()) {
        s.out().line(only.empty() ? "No threads." : fmt::format("No threads match '{}'.", trim_copy(args)));
        return;
    }
    std::size_t width = 9;   // "Target Id"
    for (auto& r : rows) {
        width = std::max(width, r.id.size());
    }
    s.out().line(fmt::format("  {:<4} {:<{}} Frame ", "Id", "Target Id", width));
    nlohmann::json list = nlohmann::json::array();
    for (auto& r : rows) {
        bool current = r.tid == s.selected_tid();
        s.out().line(fmt::format("{} {:<4} {:<{}} {}", current ? '*' : ' ', r.number, r.id, width, r.frame));
        list.push_back({{"id", r.number}, {"lwp", r.tid}, {"target_id", r.id}, {"frame", r.frame}, {"current", current}});
    }
    s.out().field("threads", list);
}

void cmd_thread(session& s, std::string_view args) {
    auto a = trim_copy(args);
    if (!has_threads(s)) {
        error::send("No thread selected.");
    }
    s.refresh_thread_numbers();
    if (a.empty()) {
        pid_t tid = s.selected_tid();
        s.out().line(fmt::format("[Current thread is {} ({})]", s.thread_number(tid), s.thread_target_id(tid)));
        return;
    }
    int n = parse_id_number(a, "thread");
    auto tid = s.tid_of_thread_number(n);
    if (!tid) {
        error::send(fmt::format("Unknown thread {}.", n));
    }
    s.select_thread(*tid);
    s.out().line(fmt::format("[Switching to thread {} ({})]", n, s.thread_target_id(*tid)));
    auto& frames = s.stack(*tid);
    if (!frames.empty()) {
        std::string text = format_frame_line(s, frames.front(), true);
        std::string src = source_line_for(s, frames.front());
        s.out().line(text);
        if (!src.empty()) {
            s.out().line(src);
        }
    }
}

void cmd_thread_apply(session& s, std::string_view args) {
    auto a = trim_copy(args);
    if (!has_threads(s)) {
        error::send("No threads.");
    }
    s.refresh_thread_numbers();
    std::vector<pid_t> targets;
    std::string command;
    if (a.rfind("all", 0) == 0 && (a.size() == 3 || std::isspace(static_cast<unsigned char>(a[3])))) {
        command = trim_copy(std::string_view(a).substr(3));
        auto threads = s.target()->threads();
        // gdb applies to all threads in descending number order.
        std::vector<std::pair<int, pid_t>> order;
        for (auto* t : threads) {
            order.emplace_back(s.thread_number(t->tid()), t->tid());
        }
        std::sort(order.rbegin(), order.rend());
        for (auto& [n, tid] : order) {
            targets.push_back(tid);
        }
    } else {
        std::istringstream in(a);
        std::string tok;
        std::size_t consumed = 0;
        while (in >> tok) {
            bool numeric = !tok.empty() && std::all_of(tok.begin(), tok.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c)) || c == '-';
            });
            if (!numeric) {
                break;
            }
            consumed = static_cast<std::size_t>(in.tellg() == -1 ? a.size() : static_cast<std::size_t>(in.tellg()));
            auto dash = tok.find('-');
            int lo = std::stoi(tok.substr(0, dash));
            int hi = dash == std::string::npos ? lo : std::stoi(tok.substr(dash + 1));
            for (int n = lo; n <= hi; ++n) {
                auto tid = s.tid_of_thread_number(n);
                if (!tid) {
                    s.out().error(fmt::format("warning: Unknown thread {}", n));
                    continue;
                }
                targets.push_back(*tid);
            }
        }
        command = trim_copy(std::string_view(a).substr(std::min(consumed, a.size())));
        if (consumed == 0) {
            error::send("Please specify a thread ID list");
        }
    }
    if (command.empty()) {
        error::send("Please specify a command following the thread ID list");
    }
    pid_t saved = s.selected_tid();
    int saved_frame = s.selected_frame();
    bool all_ok = true;
    for (pid_t tid : targets) {
        if (!has_threads(s) || !s.target()->find_thread(tid)) {
            continue;
        }
        s.select_thread(tid);
        s.out().line("");
        s.out().line(fmt::format("Thread {} ({}):", s.thread_number(tid), target_id_with_name(s, tid)));
        all_ok = s.execute(command) && all_ok;
    }
    if (has_threads(s) && s.target()->find_thread(saved)) {
        s.select_thread(saved);
        s.select_frame(saved_frame);
    }
    if (!all_ok) {
        error::send(fmt::format("thread apply: '{}' failed in some threads", command));
    }
}

}  // namespace

void register_thread_commands(command_table& t) {
    auto& info = t.prefix("info", {"i", "inf"}, "Generic command for showing things about the program being debugged.");
    info.add({"threads", {"th", "thr", "thre", "threa"}, "Display currently known threads.",
              "info threads [ID]...\nId, target id (pthread_t and LWP), name and frame of each thread.", info_threads,
              false, nullptr});
    auto& thread = t.prefix("thread", {"t"}, "Use this command to switch between threads.");
    (void)thread;
    thread.add({"apply", {}, "Apply a command to a list of threads.",
                "thread apply all COMMAND\nthread apply ID... COMMAND", cmd_thread_apply, false, nullptr});
    if (auto* c = t.find_mutable("thread")) {
        c->handler = cmd_thread;
        c->help = "thread [N]\nSwitches to thread N (gdb's thread number); without N, shows the current thread.";
    }
}

}  // namespace ompdbg::app
