// The model's stepping without a front end (run/stepping.hpp): a plain debugger::session
// launches a real program under ptrace, and a stop_reporter that records what it is told
// sees `next` step over a call to the next line, `step` enter the call and `finish` come
// back to the caller, each as one step_ended. The target runs through the model's own run
// control (run/run_control.hpp), as for every front end.

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/run/stepping.hpp"
#include "ompdbg/debugger/run/stop_reporter.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::string calls() { return std::string(ompdbg::test::targets_dir) + "/tracer/tracer_calls"; }
std::string returns() { return std::string(ompdbg::test::targets_dir) + "/app/app_returns"; }

/// Keeps what the model tells its front end, and answers as a front end that shows every
/// stop and has no user breakpoints.
struct recording_reporter final : stop_reporter {
    struct step_end {
        pid_t tid;
        bool frame_line;
    };
    std::vector<step_end> ended;
    std::vector<tracer::stop_reason> stops;
    std::vector<std::string> finishing_from;
    std::vector<std::string> until_exit_of;
    int ran_on = 0;
    bool stop(const tracer::stop_reason& why) override {
        stops.push_back(why);
        return true;
    }
    bool breakpoint_hit(pid_t, std::uint64_t) override { return false; }
    void step_ended(pid_t tid, bool frame_line) override { ended.push_back({tid, frame_line}); }
    void run_on() override { ++ran_on; }
    void stepping_until_exit(std::string_view function) override { until_exit_of.emplace_back(function); }
    void finishing(const stack_frame& f) override { finishing_from.push_back(f.function ? f.function->name : "??"); }
};

/// Launches `program` (stdout to /dev/null) as the session's process.
void launch(session& s, const std::string& program) {
    s.set_program(program, {});
    tracer::launch_options opts;
    opts.stdout_path = "/dev/null";
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(program, {}, opts));
}

/// The function and line of frame 0 of `tid`, as a front end shows the stop.
std::pair<std::string, int> where(session& s, pid_t tid) {
    const auto& frames = s.stack(tid);
    REQUIRE_FALSE(frames.empty());
    const auto& f = frames.front();
    return {f.function ? f.function->name : "??", f.line ? f.line->line : 0};
}

}  // namespace

TEST_CASE("stepping in the model: next over a call ends at the next line, step enters the call and finish returns "
          "to the caller, each reported once as step_ended",
          "[stepping]") {
    REQUIRE(std::filesystem::exists(calls()));
    session s;
    launch(s, calls());
    pid_t tid = s.selected_tid();
    recording_reporter report;

    // To `tick();` (calls.c:14), through the library's run_to_address.
    std::string why;
    auto locs = resolve_spec(s, "calls.c:14", why);
    REQUIRE(locs.size() == 1);
    CHECK_FALSE(run_to_address(s, report, tid, locs[0].address.addr(), 0).has_value());
    CHECK(where(s, tid) == std::pair<std::string, int>{"main", 14});

    // next: over tick() to the loop's `++i` (calls.c:13), in the same frame.
    step_lines(s, report, step_mode::next, 1);
    REQUIRE(report.ended.size() == 1);
    CHECK(report.ended[0].tid == tid);
    CHECK_FALSE(report.ended[0].frame_line);
    CHECK(where(s, tid) == std::pair<std::string, int>{"main", 13});

    // step, step: back to line 14, then into tick (a new frame: the frame line is shown).
    step_lines(s, report, step_mode::step, 2);
    REQUIRE(report.ended.size() == 3);
    CHECK_FALSE(report.ended[1].frame_line);
    CHECK(report.ended[2].frame_line);
    CHECK(where(s, tid) == std::pair<std::string, int>{"tick", 9});

    // finish: out of tick, void, back in main.
    auto result = finish_frame(s, report);
    REQUIRE(report.finishing_from == std::vector<std::string>{"tick"});
    CHECK(result.returned);
    CHECK_FALSE(result.value.has_value());
    REQUIRE(report.ended.size() == 4);
    CHECK(report.ended[3].frame_line);
    CHECK(where(s, tid).first == "main");

    CHECK(report.stops.empty());
    CHECK(report.ran_on == 0);
    CHECK(report.until_exit_of.empty());
    s.end_target();
}

TEST_CASE("stepping in the model: finish returns the value as data, a struct of three ints from rax/rdx", "[stepping]") {
    REQUIRE(std::filesystem::exists(returns()));
    session s;
    launch(s, returns());
    pid_t tid = s.selected_tid();
    recording_reporter report;
    std::string why;
    auto locs = resolve_spec(s, "make_three_ints", why);
    REQUIRE(locs.size() == 1);
    CHECK_FALSE(run_to_address(s, report, tid, locs[0].address.addr(), 0).has_value());
    CHECK(where(s, tid).first == "make_three_ints");

    auto result = finish_frame(s, report);
    CHECK(report.finishing_from == std::vector<std::string>{"make_three_ints"});
    CHECK(result.returned);
    REQUIRE(result.value.has_value());
    CHECK(result.value->val_type.name() == "struct three_ints");
    REQUIRE(result.value->bytes.size() == 12);
    int fields[3];
    std::memcpy(fields, result.value->bytes.data(), sizeof fields);
    CHECK(fields[0] == 3);   // base = argc + 2
    CHECK(fields[1] == -9);
    CHECK(fields[2] == 103);
    CHECK(where(s, tid).first == "main");
    CHECK(report.stops.empty());
    s.end_target();
}
