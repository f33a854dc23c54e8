// watch, rwatch, awatch (and -l / -location), info watchpoints.
#include "commands_watch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "commands_inferiors.hpp"

#include "ompdbg/debugger/breakpoints/watchpoint_edits.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_hits.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "stop_printer.hpp"
#include "user_hooks.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/watchpoint.hpp"

namespace ompdbg::app {

namespace {

using tracer::watch_kind;
using tracer::watch_mode;

std::string trimmed(std::string_view s) {
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// gdb's `set can-use-hw-watchpoints`, plus OMPDBG_HW_WATCHPOINTS=force|off|auto (force:
// use the debug registers even where the probe says they never trap, for tests of the
// register programming).
struct watch_settings {
    bool can_use_hw = true;
    bool told_fallback = false;
};

watch_settings& settings() {
    static watch_settings st;
    return st;
}

watch_mode choose_mode(session& s) {
    const char* env = std::getenv("OMPDBG_HW_WATCHPOINTS");
    std::string_view forced = env ? env : "auto";
    if (forced == "off" || !settings().can_use_hw) {
        return watch_mode::software;
    }
    if (forced == "force" || tracer::hardware_watchpoints_trap()) {
        return watch_mode::hardware;
    }
    if (!settings().told_fallback) {
        settings().told_fallback = true;
        s.out().line("Hardware watchpoints do not trigger on this machine (the debug registers accept "
                     "writes but never trap): using software watchpoints (write-protected pages).");
    }
    return watch_mode::software;
}

std::string kind_title(const watchpoint& w) {
    bool hw = w.mode == watch_mode::hardware;
    switch (w.kind) {
    case watch_kind::write: return hw ? "Hardware watchpoint" : "Watchpoint";
    case watch_kind::read: return hw ? "Hardware read watchpoint" : "Read watchpoint";
    case watch_kind::access: return hw ? "Hardware access (read/write) watchpoint" : "Access (read/write) watchpoint";
    }
    return "Watchpoint";
}

std::string kind_name(watch_kind k) {
    return k == watch_kind::write ? "write" : k == watch_kind::read ? "read" : "access";
}

void cmd_watch(session& s, std::string_view args, watch_kind kind) {
    std::string text = trimmed(args);
    bool location = false;
    for (std::string opt : {"-location ", "-l "}) {
        if (text.rfind(opt, 0) == 0) {
            location = true;
            text = trimmed(std::string_view(text).substr(opt.size()));
        }
    }
    if (text.empty() || text == "-l" || text == "-location") {
        error::send("Argument required (expression to compute).");
    }
    watchpoint_request r;
    r.expression = text;
    r.kind = kind;
    r.location = location;
    const int number = add_watchpoint(s, r, [&] { return choose_mode(s); });
    const watchpoint& w = s.watchpoints().at(number);
    s.out().line(fmt::format("{} {}: {}", kind_title(w), w.number, w.expression));
    nlohmann::json j{{"number", w.number},
                     {"expression", w.expression},
                     {"kind", kind_name(kind)},
                     {"mode", w.mode == watch_mode::hardware ? "hardware" : "software"}};
    if (w.chain.empty()) {
        j["address"] = fmt::format("{:#x}", *w.value.address);
        j["size"] = w.value.val_type.size();
    } else {
        // A computed expression (`watch a + b`): every piece of memory its value is read from.
        nlohmann::json where = nlohmann::json::array();
        for (auto [addr, size] : w.chain) {
            where.push_back({{"address", fmt::format("{:#x}", addr)}, {"size", size}});
        }
        j["watched"] = where;
    }
    s.out().field("watchpoint", j);
}

void cmd_info_watchpoints(session& s, std::string_view) {
    auto rows = watchpoint_rows(s);
    if (rows.empty()) {
        s.out().line("No watchpoints.");
        s.out().field("watchpoints", nlohmann::json::array());
        return;
    }
    std::size_t width = 14;
    for (const auto& r : rows) {
        width = std::max(width, r.type.size());
    }
    // gdb: the Address column is 18 wide while the process lives (watchpoints have one), else 10.
    std::size_t addr_width = s.process() != nullptr && s.process()->is_alive() ? 18 : 10;
    s.out().line(fmt::format("Num     {:<{}} Disp Enb {:<{}} What", "Type", width, "Address", addr_width));
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : rows) {
        s.out().line(fmt::format("{:<7} {:<{}} keep {:<3} {:<{}} {}", r.number, r.type, width, r.enabled ? "y" : "n", "",
                                 addr_width, r.what));
        for (const auto& d : r.details) {
            s.out().line(d);
        }
        list.push_back(r.json);
    }
    s.out().field("watchpoints", list);
}

}  // namespace

void report_watchpoint_hit(session& s, const debugger::stop_report& r) {
    const auto& hit = r.watchpoint;
    const auto& why = r.why;
    const watchpoint w = s.watchpoints().at(hit->number);   // a copy: hook-stop may delete it
    switch_to_stopped_thread(s, why.tid);
    run_stop_hook(s);
    // gdb names the thread once the program has several, or there are several inferiors.
    std::string who = s.multi_threaded() || qualified_thread_numbers(s) ? stop_thread_label(s, why.tid) + " hit " : "";
    std::string text = fmt::format("\n{}{} {}: {}\n\n", who, kind_title(w), w.number, w.expression);
    nlohmann::json j{{"watchpoint", w.number}, {"thread", s.thread_number(why.tid)}, {"expression", w.expression}};
    if (hit->changed) {
        std::string old_text = watchpoint_value_text(s, w, hit->old_bytes);
        std::string new_text = watchpoint_value_text(s, w, hit->new_bytes);
        text += fmt::format("Old value = {}\nNew value = {}", old_text, new_text);
        j["old"] = old_text;
        j["new"] = new_text;
    } else {
        std::string value = watchpoint_value_text(s, w, hit->new_bytes);
        text += fmt::format("Value = {}", value);
        j["value"] = value;
    }
    s.out().event("watchpoint-hit", j, text);
    print_location(s, why.tid, true);
}

void report_watchpoint_scope(session& s, const debugger::stop_report& r) {
    const pid_t tid = r.tid;
    switch_to_stopped_thread(s, tid);
    run_stop_hook(s);
    for (int n : r.watchpoints_ended) {
        delete_watchpoint(s, n);
        s.out().event("watchpoint-scope", {{"watchpoint", n}},
                      fmt::format("\nWatchpoint {} deleted because the program has left the block in\n"
                                  "which its expression is valid.",
                                  n));
    }
    print_location(s, tid, true);
}

std::vector<info_breakpoint_row> watchpoint_rows(session& s) {
    std::vector<info_breakpoint_row> rows;
    for (auto& [n, w] : s.watchpoints()) {
        info_breakpoint_row r;
        r.number = n;
        r.type = w.kind == watch_kind::write ? (w.mode == watch_mode::hardware ? "hw watchpoint" : "watchpoint")
                 : w.kind == watch_kind::read ? "read watchpoint"
                                              : "acc watchpoint";
        r.enabled = w.enabled;
        r.what = w.expression;
        if (w.hit_count > 0) {
            r.details.push_back(
                fmt::format("\tbreakpoint already hit {} time{}", w.hit_count, w.hit_count == 1 ? "" : "s"));
        }
        r.json = {{"number", n},         {"type", r.type},     {"expression", w.expression}, {"kind", kind_name(w.kind)},
                  {"enabled", w.enabled}, {"hits", w.hit_count}};
        rows.push_back(std::move(r));
    }
    return rows;
}

void rearm_watchpoints(session& s) {
    for (const auto& d : debugger::rearm_watchpoints(s)) {
        if (!d.error.empty()) {
            s.out().error(fmt::format("Could not insert watchpoint {}: {}", d.number, d.error));
        }
    }
}

void register_watch_commands(command_table& t) {
    t.add({"watch", {}, "Set a watchpoint for EXPRESSION.",
           "watch [-l|-location] EXPRESSION\nStops when EXPRESSION's value changes (a variable, a member, *ptr, "
           "an array element, a whole struct or array: a value in memory; a debug register covers 1, 2, 4 or 8 bytes, "
           "a software watchpoint up to 64 KiB).\n-location watches the address EXPRESSION has now, "
           "whatever happens to its frame.\nUses a debug register where they trap on this machine, else a software "
           "watchpoint (the page is write-protected).",
           [](session& s, std::string_view a) { cmd_watch(s, a, watch_kind::write); }, false, nullptr});
    t.add({"rwatch", {}, "Set a read watchpoint for EXPRESSION.",
           "rwatch [-l|-location] EXPRESSION\nStops when the program reads EXPRESSION.",
           [](session& s, std::string_view a) { cmd_watch(s, a, watch_kind::read); }, false, nullptr});
    t.add({"awatch", {}, "Set an access (read/write) watchpoint for EXPRESSION.",
           "awatch [-l|-location] EXPRESSION\nStops when the program reads or writes EXPRESSION.",
           [](session& s, std::string_view a) { cmd_watch(s, a, watch_kind::access); }, false, nullptr});
    command_table& info = prefix_table(t, "info", "Generic command for showing things about the program being debugged.");
    info.add({"watchpoints", {}, "Status of specified watchpoints (all watchpoints if no argument).",
              "info watchpoints", cmd_info_watchpoints, false, nullptr});
    command_table& set = prefix_table(t, "set", "Evaluate expression EXP and assign result to variable VAR.");
    set.add({"can-use-hw-watchpoints", {}, "Set debugger's willingness to use watchpoint hardware.",
             "set can-use-hw-watchpoints 0|1\n0: software watchpoints only; 1 (default): debug registers where they "
             "trap on this machine.",
             [](session&, std::string_view a) {
                 std::string v = trimmed(a);
                 if (v != "0" && v != "1") {
                     error::send("\"set can-use-hw-watchpoints\" takes 0 or 1.");
                 }
                 settings().can_use_hw = v == "1";
             },
             false, nullptr});
}

}  // namespace ompdbg::app
