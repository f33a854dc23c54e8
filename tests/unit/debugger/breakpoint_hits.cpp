// The model's breakpoint hit decisions without a front end (breakpoints/breakpoint_hits.hpp):
// a plain debugger::session launches tracer_calls under ptrace (no agent: every hit
// traps), sets breakpoints through breakpoint_edits and resumes; at each trap
// decide_breakpoint_hit says which breakpoints stop, with the hit and ignore counts kept
// as `info breakpoints` would show them, conditions false and true, a condition that
// cannot be evaluated, a dprintf and a temporary breakpoint that the stop ends.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_hits.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::string calls() { return std::string(ompdbg::test::targets_dir) + "/tracer/tracer_calls"; }

/// Launches tracer_calls (stdout to /dev/null) calling tick() `n` times, without the agent.
void launch(session& s, int n) {
    s.settings().breakpoint_fast = false;
    std::vector<std::string> args{std::to_string(n)};
    s.set_program(calls(), args);
    tracer::launch_options opts;
    opts.stdout_path = "/dev/null";
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(calls(), args, opts));
}

/// A request for a breakpoint at `spec`.
breakpoint_request at(const std::string& spec) {
    breakpoint_request r;
    r.spec = spec;
    return r;
}

/// Adds a breakpoint as the CLI's `break`/`tbreak`/`dprintf` do; returns its number.
int add(session& s, const breakpoint_request& r) {
    std::string why;
    breakpoint bp = make_breakpoint(s, r, why);
    REQUIRE_FALSE(bp.pending);
    return add_breakpoint(s, std::move(bp));
}

/// Resumes until the next breakpoint trap (passing over library and thread events);
/// nullopt when the program ended, with its exit code in `exit_code`.
std::optional<tracer::stop_reason> next_trap(session& s, int& exit_code) {
    while (true) {
        auto& p = s.require_process();
        s.on_resume();
        p.resume();
        auto why = p.wait_for_stop();
        if (why.kind == tracer::stop_kind::exited) {
            exit_code = why.exit_code;
            s.drop_process();
            return std::nullopt;
        }
        if (why.kind == tracer::stop_kind::breakpoint) {
            return why;
        }
        REQUIRE((why.kind == tracer::stop_kind::library_event || why.kind == tracer::stop_kind::thread_created ||
                 why.kind == tracer::stop_kind::thread_exited));
    }
}

/// The function and line of `tid`'s frame 0.
std::pair<std::string, int> where(session& s, pid_t tid) {
    const auto& frames = s.stack(tid);
    REQUIRE_FALSE(frames.empty());
    const auto& f = frames.front();
    return {f.function ? f.function->name : "??", f.line ? f.line->line : 0};
}

/// One trap as a test sees it: where, and what the model decided.
struct trap {
    std::pair<std::string, int> at;
    breakpoint_hit_decision hit;
};

/// Runs the program to its end, deciding every trap (and ending temporary breakpoints on
/// the stops, as a front end does); returns the traps in order.
std::vector<trap> run_to_end(session& s, int& exit_code) {
    std::vector<trap> traps;
    while (auto why = next_trap(s, exit_code)) {
        trap t{where(s, why->tid), decide_breakpoint_hit(s, why->tid, why->breakpoint_addr->addr())};
        if (t.hit.stops()) {
            end_temporary_breakpoints(s, t.hit.stopping);
        }
        traps.push_back(std::move(t));
        REQUIRE(traps.size() < 100);
    }
    return traps;
}

}  // namespace

TEST_CASE("breakpoint hits in the model: a condition false then true, an ignore count and a temporary breakpoint, "
          "with the hit counts info breakpoints shows",
          "[breakpoints]") {
    REQUIRE(std::filesystem::exists(calls()));
    session s;
    launch(s, 6);
    // `break calls.c:14 if i % 2 == 1` + `ignore 1 1`: i = 1 is ignored, i = 3 and 5 stop.
    auto odd_request = at("calls.c:14");
    odd_request.condition = "i % 2 == 1";
    int odd = add(s, odd_request);
    s.breakpoints().at(odd).ignore_count = 1;
    // `tbreak tick`: the first call stops, then the breakpoint is gone.
    auto once_request = at("tick");
    once_request.temporary = true;
    int once = add(s, once_request);

    int exit_code = -1;
    auto traps = run_to_end(s, exit_code);
    CHECK(exit_code == 7);
    // main:14 six times (one site for odd), tick once (until once is deleted).
    REQUIRE(traps.size() == 7);
    std::vector<std::vector<int>> stopping;
    for (const auto& t : traps) {
        stopping.push_back(t.hit.stopping);
        CHECK(t.hit.condition_errors.empty());
        CHECK(t.hit.dprintfs.empty());
    }
    std::pair<std::string, int> line14{"main", 14};
    CHECK(traps[0].at == line14);                     // i = 0: false
    CHECK(traps[1].at.first == "tick");               // the tbreak
    CHECK(traps[2].at == line14);                     // i = 1: true, ignored
    CHECK(stopping == std::vector<std::vector<int>>{{}, {once}, {}, {}, {odd}, {}, {odd}});
    CHECK(traps[4].hit.first_location == 0);
    CHECK(traps[4].hit.hidden_inline_frames == 0);
    CHECK(s.breakpoints().count(once) == 0);          // ended by its stop
    // Counted when the condition held (gdb counts the ignored hit too), not when it was false.
    CHECK(s.breakpoints().at(odd).hit_count == 3);
    CHECK(s.breakpoints().at(odd).ignore_count == 0);
}

TEST_CASE("breakpoint hits in the model: a condition that cannot be evaluated stops with gdb's error, a dprintf "
          "never stops, a breakpoint of another thread is passed over",
          "[breakpoints]") {
    REQUIRE(std::filesystem::exists(calls()));
    session s;
    launch(s, 2);
    auto bad_request = at("calls.c:14");
    bad_request.condition = "no_such_name > 0";
    int bad = add(s, bad_request);
    auto print_request = at("tick");
    print_request.dprintf = true;
    print_request.commands = {"printf \"tick\\n\""};
    int print = add(s, print_request);
    auto other_request = at("tick");
    other_request.thread_tid = s.selected_tid() + 100000;   // no such thread
    int other = add(s, other_request);

    int exit_code = -1;
    auto traps = run_to_end(s, exit_code);
    CHECK(exit_code == 7);
    REQUIRE(traps.size() == 4);   // main:14, tick, twice
    for (std::size_t i = 0; i < traps.size(); i += 2) {
        const auto& at14 = traps[i].hit;
        CHECK(traps[i].at == std::pair<std::string, int>{"main", 14});
        CHECK(at14.stopping == std::vector<int>{bad});
        REQUIRE(at14.condition_errors.size() == 1);
        CHECK(at14.condition_errors[0] ==
              "Error in testing condition for breakpoint " + std::to_string(bad) +
                  ":\nNo symbol \"no_such_name\" in current context.");
        const auto& in_tick = traps[i + 1].hit;
        CHECK(traps[i + 1].at.first == "tick");
        CHECK_FALSE(in_tick.stops());
        CHECK(in_tick.dprintfs == std::vector<int>{print});
    }
    CHECK(s.breakpoints().at(bad).hit_count == 2);
    CHECK(s.breakpoints().at(print).hit_count == 2);
    CHECK(s.breakpoints().at(other).hit_count == 0);
}
