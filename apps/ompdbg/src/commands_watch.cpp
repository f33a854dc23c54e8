// watch, rwatch, awatch (and -l / -location), info watchpoints.
#include "commands_watch.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "commands_inferiors.hpp"

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

// Whether /proc/PID/maps here is the map of the process we debug: the pid of a process
// reached through a remote agent is another host's (here it may be anyone's, or no one's).
bool maps_are_ours(pid_t pid) {
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            long tracer = std::atol(line.c_str() + 10);   // the tracing thread: one of ours?
            std::error_code ec;
            return tracer > 0 && std::filesystem::exists(fmt::format("/proc/self/task/{}", tracer), ec);
        }
    }
    return false;
}

// True when `addr` lies in the stack mapping of thread `tid` (a local variable). Without
// the process's map (a remote process), the stack as far as it unwinds: from the red zone
// below sp to the outermost frame's CFA.
bool on_thread_stack(session& s, pid_t tid, std::uint64_t addr) {
    auto* t = s.process() ? s.process()->find_thread(tid) : nullptr;
    if (t == nullptr) {
        return false;
    }
    std::uint64_t sp = t->regs().sp();
    if (!maps_are_ours(s.process()->pid())) {
        const auto& frames = s.stack(tid);
        std::uint64_t top = frames.empty() ? 0 : frames.back().physical.cfa.addr();
        return addr + 128 >= sp && addr < top;
    }
    std::ifstream maps(fmt::format("/proc/{}/maps", s.process()->pid()));
    std::string line;
    while (std::getline(maps, line)) {
        std::uint64_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi) {
            return addr >= lo && addr < hi;
        }
    }
    return false;
}

bool is_remote(session& s) {
    return s.process() != nullptr && s.process()->connection() != "native";
}

/// Merges the evaluator's reads into ranges (a struct read member by member is one).
std::vector<std::pair<std::uint64_t, std::size_t>> merge_reads(std::vector<std::pair<std::uint64_t, std::size_t>> reads) {
    std::sort(reads.begin(), reads.end());
    std::vector<std::pair<std::uint64_t, std::size_t>> out;
    for (auto [addr, size] : reads) {
        if (size == 0) {
            continue;
        }
        if (!out.empty() && addr <= out.back().first + out.back().second) {
            auto end = std::max(out.back().first + out.back().second, addr + size);
            out.back().second = static_cast<std::size_t>(end - out.back().first);
        } else {
            out.emplace_back(addr, size);
        }
    }
    return out;
}

/// `watch a + b`: not an lvalue, but a value computed from memory. As gdb, every piece
/// of memory the value was read from is watched, and a write there is reported when the
/// expression's value changed.
void watch_computed(session& s, const std::string& text, watch_kind kind, const dwarf::value& v,
                    const std::vector<std::pair<std::uint64_t, std::size_t>>& reads) {
    if (kind != watch_kind::write) {
        error::send("Expression cannot be implemented with read/access watchpoint.");
    }
    auto chain = merge_reads(reads);
    for (auto [addr, size] : chain) {
        if (on_thread_stack(s, s.selected_tid(), addr)) {
            error::send(fmt::format("Cannot watch `{}': a value computed from local variables (watch each "
                                    "variable, or use watch -location on each)",
                                    text));
        }
    }
    watchpoint w;
    w.expression = text;
    w.kind = kind;
    w.mode = choose_mode(s);
    w.value = v;
    w.value.bytes.clear();
    w.chain = chain;
    arm_watchpoint_or_fall_back(s, w);
    w.old_bytes = v.bytes;
    w.number = s.next_breakpoint_number();
    s.out().line(fmt::format("{} {}: {}", kind_title(w), w.number, w.expression));
    nlohmann::json where = nlohmann::json::array();
    for (auto [addr, size] : chain) {
        where.push_back({{"address", fmt::format("{:#x}", addr)}, {"size", size}});
    }
    s.out().field("watchpoint", {{"number", w.number},
                                 {"expression", w.expression},
                                 {"kind", kind_name(kind)},
                                 {"mode", w.mode == watch_mode::hardware ? "hardware" : "software"},
                                 {"watched", where}});
    s.watchpoints()[w.number] = std::move(w);
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
    auto& proc = s.require_process();
    frame_context ctx = frame_context::for_selection(s);
    std::vector<std::pair<std::uint64_t, std::size_t>> reads;
    ctx.record_reads(&reads);
    dwarf::value v = dwarf::evaluate(text, ctx);
    ctx.record_reads(nullptr);
    // No name in it: a constant (gdb's message); names but no lvalue: say why.
    bool has_name = std::any_of(text.begin(), text.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
    });
    if (!v.address && !has_name) {
        error::send(fmt::format("Cannot watch constant value `{}'.", text));
    }
    if (!v.address) {
        if (v.dwarf_register || !v.register_name.empty() || ctx.read_named_register()) {
            error::send(fmt::format("Cannot watch `{}': it lives in a register, not in memory.", text));
        }
        if (reads.empty()) {
            error::send(fmt::format("Cannot watch `{}': it is not a value in memory (an lvalue).", text));
        }
        watch_computed(s, text, kind, v, reads);
        return;
    }
    if (v.bit_size) {
        error::send(fmt::format("Cannot watch the bit-field `{}'; watch the whole structure member instead.", text));
    }
    std::size_t size = v.val_type.size();
    watch_mode mode = choose_mode(s);
    // One debug register covers 1, 2, 4 or 8 bytes; software watchpoints (guarded pages,
    // single steps on a remote process) watch a struct or an array as a whole, as gdb's do.
    bool one_register = size != 0 && size <= 8 && (size & (size - 1)) == 0;
    if (mode == watch_mode::hardware && !one_register && kind == watch_kind::write && is_remote(s)) {
        mode = watch_mode::software;
    }
    if (mode == watch_mode::hardware && !one_register) {
        error::send(fmt::format("Cannot watch `{}': it is {} bytes wide, and one watchpoint covers 1, 2, 4 or 8 "
                                "bytes (one debug register). Watch a member or an element instead.",
                                text, size));
    }
    if (size == 0) {
        error::send(fmt::format("Cannot watch `{}': it has no size.", text));
    }
    watchpoint w;
    w.expression = location ? "-location " + text : text;
    w.kind = kind;
    w.mode = mode;
    w.value = v;
    w.value.bytes.clear();
    arm_watchpoint_or_fall_back(s, w);
    w.number = s.next_breakpoint_number();
    // Locals end with their frame: plant a breakpoint where it returns (gdb deletes the
    // watchpoint there). -location watches the address whatever happens to the frame.
    if (!location && ctx.has_frame() && on_thread_stack(s, s.selected_tid(), *v.address)) {
        const auto& frames = s.stack(s.selected_tid());
        std::size_t level = static_cast<std::size_t>(s.selected_frame());
        if (level + 1 < frames.size()) {
            w.scope_pc = frames[level + 1].pc();
            w.scope_cfa = frames[level].physical.cfa.addr();
            w.scope_tid = s.selected_tid();
            proc.add_breakpoint_site(virt_addr(w.scope_pc));
        }
    }
    s.out().line(fmt::format("{} {}: {}", kind_title(w), w.number, w.expression));
    s.out().field("watchpoint", {{"number", w.number},
                                 {"expression", w.expression},
                                 {"kind", kind_name(kind)},
                                 {"mode", w.mode == watch_mode::hardware ? "hardware" : "software"},
                                 {"address", fmt::format("{:#x}", *v.address)},
                                 {"size", size}});
    s.watchpoints()[w.number] = std::move(w);
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

bool report_watchpoint_hit(session& s, const tracer::stop_reason& why) {
    auto hit = decide_watchpoint_hit(s, why);
    if (!hit) {
        return false;
    }
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
    return true;
}

bool check_watchpoint_scope(session& s, pid_t tid, std::uint64_t addr) {
    std::vector<int> ended = watchpoints_out_of_scope(s, tid, addr);
    if (ended.empty()) {
        return false;
    }
    switch_to_stopped_thread(s, tid);
    run_stop_hook(s);
    for (int n : ended) {
        delete_watchpoint(s, n);
        s.out().event("watchpoint-scope", {{"watchpoint", n}},
                      fmt::format("\nWatchpoint {} deleted because the program has left the block in\n"
                                  "which its expression is valid.",
                                  n));
    }
    print_location(s, tid, true);
    return true;
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

void move_watchpoints_to_child(session& s, pid_t parent_tid) {
    for (const auto& d : debugger::move_watchpoints_to_child(s, parent_tid)) {
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
