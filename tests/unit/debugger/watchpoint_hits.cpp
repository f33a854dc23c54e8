// The model's watchpoint decisions without a front end (breakpoints/watchpoint_arming.hpp,
// watchpoint_edits.hpp, watchpoint_hits.hpp): a plain debugger::session runs tracer_calls
// to main, makes a software watchpoint on the global `ticks` (and is refused one on a
// constant) and resumes; each write that changes it is a
// hit with the old and new value as data (and as the text `print` shows), counted, and
// nothing else stops the program; a deleted watchpoint no longer stops it.

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_arming.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_edits.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint_hits.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::string calls() { return std::string(ompdbg::test::targets_dir) + "/tracer/tracer_calls"; }

/// Resumes until a stop that is not a library or thread event.
tracer::stop_reason next_stop(session& s) {
    while (true) {
        auto& p = s.require_process();
        s.on_resume();
        p.resume();
        auto why = p.wait_for_stop();
        if (why.kind != tracer::stop_kind::library_event && why.kind != tracer::stop_kind::thread_created &&
            why.kind != tracer::stop_kind::thread_exited) {
            return why;
        }
    }
}

/// The int in `bytes`.
int as_int(const std::vector<std::byte>& bytes) {
    int v = 0;
    REQUIRE(bytes.size() == sizeof v);
    std::memcpy(&v, bytes.data(), sizeof v);
    return v;
}

}  // namespace

TEST_CASE("watchpoint hits in the model: each change of a watched global is a hit with its old and new value, "
          "counted, and a deleted watchpoint stops nothing",
          "[watchpoints]") {
    REQUIRE(std::filesystem::exists(calls()));
    session s;
    std::vector<std::string> args{"3"};
    s.set_program(calls(), args);
    tracer::launch_options opts;
    opts.stdout_path = "/dev/null";
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(calls(), args, opts));

    breakpoint_request at_main;
    at_main.spec = "main";
    std::string why;
    int main_bp = add_breakpoint(s, make_breakpoint(s, at_main, why));
    REQUIRE(next_stop(s).kind == tracer::stop_kind::breakpoint);
    REQUIRE(delete_breakpoint(s, main_bp));

    // `watch ticks` as the CLI makes it, with a software watchpoint (debug registers do not
    // trap on every machine); `watch 1` is refused with gdb's message.
    auto software = [] { return tracer::watch_mode::software; };
    watchpoint_request constant;
    constant.expression = "1";
    CHECK_THROWS_WITH(add_watchpoint(s, constant, software), "Cannot watch constant value `1'.");
    CHECK(s.watchpoints().empty());
    watchpoint_request ticks;
    ticks.expression = "ticks";
    const int n = add_watchpoint(s, ticks, software);
    REQUIRE(s.watchpoints().count(n) == 1);
    CHECK(s.watchpoints().at(n).mode == tracer::watch_mode::software);
    CHECK(s.watchpoints().at(n).scope_pc == 0);   // a global: never out of scope
    CHECK(as_int(s.watchpoints().at(n).old_bytes) == 0);

    std::vector<std::pair<int, int>> changes;
    std::vector<std::string> texts;
    while (changes.size() < 2) {
        auto stop = next_stop(s);
        REQUIRE(stop.kind == tracer::stop_kind::watchpoint);
        auto hit = decide_watchpoint_hit(s, stop);
        if (!hit) {
            continue;   // a write elsewhere on the guarded page, or of the same value
        }
        CHECK(hit->number == n);
        CHECK(hit->changed);
        changes.emplace_back(as_int(hit->old_bytes), as_int(hit->new_bytes));
        texts.push_back(watchpoint_value_text(s, s.watchpoints().at(n), hit->new_bytes));
    }
    CHECK(changes == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}});
    CHECK(texts == std::vector<std::string>{"1", "2"});
    CHECK(s.watchpoints().at(n).hit_count == 2);
    CHECK(as_int(s.watchpoints().at(n).old_bytes) == 2);   // compared with at the next write

    // Not a stop of any watchpoint: no decision, nothing counted.
    tracer::stop_reason other = {};
    other.kind = tracer::stop_kind::watchpoint;
    other.watchpoint_id = 12345;
    CHECK_FALSE(decide_watchpoint_hit(s, other).has_value());
    CHECK(s.watchpoints().at(n).hit_count == 2);

    REQUIRE(delete_watchpoint(s, n));
    CHECK_FALSE(delete_watchpoint(s, n));
    auto end = next_stop(s);
    CHECK(end.kind == tracer::stop_kind::exited);
    CHECK(end.exit_code == 7);
    s.drop_process();
}
