// `catch omp EVENT [if COND]` on the runtime's ompd_bp_* locations and the report of an
// event; what an event is and the runtime watch are libdebugger's (omp/ompd_events.hpp: the
// internal breakpoint on ompd_dll_locations_valid through which the debugger learns which
// OMPD library the runtime names, OpenMP 5.1 §20.2; run control reports the library loaded).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "commands_omp.hpp"
#include "commands_omp_state.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/debugger/omp/ompd_events.hpp"

namespace ompdbg::app {

using namespace omp_impl;

namespace {

/// Names the event's fields in a condition; everything else (program variables,
/// registers, $convenience) comes from the thread's innermost frame.
class event_context final : public dwarf::eval_context {
public:
    event_context(const omp_event& ev, dwarf::eval_context& frame) : ev_(ev), frame_(frame) {}

    std::optional<dwarf::value> lookup_variable(std::string_view name) override {
        if (auto it = ev_.fields.find(name); it != ev_.fields.end()) {
            dwarf::value v;
            v.val_type = dwarf::type::make_base("long", 8, dwarf::base_encoding::signed_int);
            v.synthetic_type_name = "long";
            v.bytes.resize(8);
            std::memcpy(v.bytes.data(), &it->second, 8);
            return v;
        }
        return frame_.lookup_variable(name);
    }
    std::optional<dwarf::value> lookup_function(std::string_view n) override { return frame_.lookup_function(n); }
    std::optional<dwarf::type> lookup_type(std::string_view n) override { return frame_.lookup_type(n); }
    std::optional<std::uint64_t> read_register(std::string_view n) override { return frame_.read_register(n); }
    void write_register(std::string_view n, std::uint64_t v) override { frame_.write_register(n, v); }
    void read_memory(std::uint64_t a, std::span<std::byte> out) override { frame_.read_memory(a, out); }
    void write_memory(std::uint64_t a, std::span<const std::byte> d) override { frame_.write_memory(a, d); }
    std::optional<std::uint64_t> read_dwarf_register(int r) override { return frame_.read_dwarf_register(r); }
    std::string symbolize(std::uint64_t a) override { return frame_.symbolize(a); }
    std::optional<dwarf::value> history(int i) override { return frame_.history(i); }
    int history_size() override { return frame_.history_size(); }
    std::optional<dwarf::value> lookup_enumerator(std::string_view n) override { return frame_.lookup_enumerator(n); }
    std::optional<dwarf::value> convenience(std::string_view n) override { return frame_.convenience(n); }
    void set_convenience(std::string_view n, const dwarf::value& v) override { frame_.set_convenience(n, v); }
    void write_dwarf_register(int r, std::uint64_t v) override { frame_.write_dwarf_register(r, v); }
    bool language_cplus() override { return false; }

private:
    const omp_event& ev_;
    dwarf::eval_context& frame_;
};

/// The condition of a `catch omp` catchpoint, evaluated over the event's fields. Throws
/// (gdb's "Error in testing condition") when it names something that does not exist.
bool event_condition_holds(session& s, pid_t tid, std::string_view event, const std::string& condition) {
    omp_event ev = read_omp_event(s, tid, event);
    const auto& frames = s.stack(tid);
    if (frames.empty()) {
        error::send("No frame selected.");
    }
    frame_context frame(s, tid, frames.front());
    event_context ctx(ev, frame);
    return dwarf::is_true(dwarf::evaluate(condition, ctx));
}

/// Splits "EVENT if COND".
std::pair<std::string, std::string> split_event_condition(std::string_view args) {
    std::string a(trim(args));
    for (std::size_t i = 0; i + 2 <= a.size(); ++i) {
        bool start_ok = i > 0 && (a[i - 1] == ' ' || a[i - 1] == '\t');
        bool end_ok = i + 2 == a.size() || a[i + 2] == ' ' || a[i + 2] == '\t' || a[i + 2] == '(';
        if (start_ok && end_ok && a.compare(i, 2, "if") == 0) {
            return {std::string(trim(std::string_view(a).substr(0, i))),
                    std::string(trim(std::string_view(a).substr(i + 2)))};
        }
    }
    return {a, {}};
}

}  // namespace

std::string omp_describe_event(session& s, pid_t tid, std::string_view event) {
    try {
        return read_omp_event(s, tid, event).text;
    } catch (const std::exception& e) {
        return std::string("(") + e.what() + ")";
    }
}

namespace omp_impl {

/// `catch omp EVENT [if COND]`: a catchpoint on the runtime's ompd_bp_* location (OpenMP
/// 5.1 §20.6), which the runtime passes once per region or task, with OMP_DEBUG=enabled.
/// COND may name the event's fields (team_size, level, active_level, thread_num, and for
/// tasks implicit, final, task_flags) besides the program's variables.
void cmd_catch_omp(session& s, std::string_view args) {
    static const std::vector<std::pair<std::string, std::string>> events = {
        {"parallel-begin", "ompd_bp_parallel_begin"}, {"parallel-end", "ompd_bp_parallel_end"},
        {"task-begin", "ompd_bp_task_begin"},         {"task-end", "ompd_bp_task_end"},
        {"thread-begin", "ompd_bp_thread_begin"},     {"thread-end", "ompd_bp_thread_end"}};
    auto [event, condition] = split_event_condition(args);
    const std::string* symbol = nullptr;
    for (const auto& [name, sym] : events) {
        if (name == event) {
            symbol = &sym;
        }
    }
    if (symbol == nullptr) {
        error::send("Unknown OpenMP event \"" + event +
                    "\": use parallel-begin, parallel-end, task-begin, task-end, thread-begin or "
                    "thread-end.");
    }
    if (!condition.empty()) {
        dwarf::parse_expression(condition);  // a syntax error is reported now, as gdb does
    }
    breakpoint bp;
    bp.spec = *symbol;
    bp.catch_what = "omp " + event;
    bp.condition = condition;
    // The session owns its breakpoints, so it outlives the functions that name it.
    bp.describe_hit = [&s, event](pid_t tid) { return omp_describe_event(s, tid, event); };
    bp.test_condition = [&s, event](pid_t tid, const std::string& cond) {
        return event_condition_holds(s, tid, event, cond);
    };
    std::string why;
    bp.locations = resolve_spec(s, bp.spec, why);
    bp.pending = bp.locations.empty();
    bp.number = s.next_breakpoint_number();
    int number = bp.number;
    s.out().line(fmt::format("Catchpoint {} ({}){}", number, bp.catch_what,
                             bp.pending ? " pending until the OpenMP runtime is loaded" : ""));
    s.out().field("catchpoint",
                  {{"number", number}, {"event", event}, {"condition", condition}, {"pending", bp.pending}});
    s.breakpoints()[number] = std::move(bp);
    if (!condition.empty()) {
        load_agent_on_demand(s);   // an attached process: the agent evaluates it (fast_breakpoints.hpp)
    }
    sync_breakpoint_sites(s);
}

}  // namespace omp_impl

}  // namespace ompdbg::app
