// Calls into the program by the model alone (infcall/inferior_call.hpp): a plain
// debugger::session, with no front end and no evaluation hooks, stops examples/calls in
// main and evaluates `sq(7)` through frame_context: the function runs in the program under
// the model's run control and its value comes back. A breakpoint inside the called
// function abandons the call with gdb's message (the stop decided by decide_stop), and the
// function's later return ends silently, as gdb pops its dummy frame.

#include <catch2/catch.hpp>

#include <sys/types.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::filesystem::path calls_program() { return std::filesystem::path(ompdbg::test::examples_dir) / "calls"; }

/// Launches examples/calls in `s` (its output to /dev/null), stopped at its first instruction.
void launch(session& s) {
    REQUIRE(std::filesystem::exists(calls_program()));
    s.settings().breakpoint_fast = false;
    s.set_program(calls_program(), {});
    tracer::launch_options opts;
    opts.stdout_path = "/dev/null";
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(calls_program(), {}, opts));
}

/// Plants a user breakpoint at `spec`; returns its number.
int break_at(session& s, const char* spec) {
    breakpoint_request r;
    r.spec = spec;
    std::string why;
    breakpoint bp = make_breakpoint(s, r, why);
    REQUIRE_FALSE(bp.pending);
    return add_breakpoint(s, std::move(bp));
}

/// Runs the program to its next stop for the user, decided by the model.
stop_report next_stop(session& s) {
    while (true) {
        stop_report r = decide_stop(s, resume_and_wait(s));
        if (r.for_user()) {
            return r;
        }
    }
}

/// The name of the innermost function of thread `tid`.
std::string innermost(session& s, pid_t tid) {
    const auto& frames = s.stack(tid);
    REQUIRE_FALSE(frames.empty());
    REQUIRE(frames.front().function);
    return frames.front().function->name;
}

/// `text` evaluated in the innermost frame of thread `tid`, read as an int.
long long eval_int(session& s, pid_t tid, const char* text) {
    frame_context ctx(s, tid, s.stack(tid).front());
    dwarf::value v = dwarf::evaluate(text, ctx);
    REQUIRE(v.bytes.size() <= sizeof(long long));
    REQUIRE_FALSE(v.bytes.empty());
    long long n = 0;
    std::memcpy(&n, v.bytes.data(), v.bytes.size());
    return n;
}

}  // namespace

TEST_CASE("inferior call: sq(7) and my_strlen(\"hello\") run in the program through frame_context with no front "
          "end and no hooks, and the caller goes on where it was",
          "[infcall]") {
    session s;
    REQUIRE(s.evaluation() == nullptr);
    launch(s);
    break_at(s, "main");
    stop_report at_main = next_stop(s);
    REQUIRE(at_main.kind == stop_class::breakpoint_hit);
    const pid_t tid = at_main.tid;
    REQUIRE(innermost(s, tid) == "main");
    const std::uint64_t pc = s.stack(tid).front().pc();

    CHECK(eval_int(s, tid, "sq(7)") == 49);
    CHECK(eval_int(s, tid, "sq(sq(3)) + 1") == 82);
    CHECK(eval_int(s, tid, "my_strlen(\"hello\")") == 5);   // the literal pushed to the target
    // The caller's registers are back: the thread is in main where it stopped.
    CHECK(innermost(s, tid) == "main");
    CHECK(s.stack(tid).front().pc() == pc);

    s.settings().may_call_functions = false;
    CHECK_THROWS_WITH(eval_int(s, tid, "sq(7)"), "Cannot call functions in the program: may-call-functions is off.");
    s.settings().may_call_functions = true;

    // The program runs on to its end untouched by the calls.
    stop_report end = next_stop(s);
    CHECK(end.kind == stop_class::process_ended);
    CHECK(end.why.kind == tracer::stop_kind::exited);
    CHECK(end.why.exit_code == 0);
    s.drop_process();
    frame_context no_process(s);
    CHECK_THROWS_WITH(dwarf::evaluate("sq(7)", no_process), "You can't do that without a process to debug.");
}

TEST_CASE("inferior call: a breakpoint in the called function abandons the call with gdb's message, the thread "
          "stays in the function, and its return later stops silently",
          "[infcall]") {
    session s;
    launch(s);
    break_at(s, "main");
    stop_report at_main = next_stop(s);
    REQUIRE(at_main.kind == stop_class::breakpoint_hit);
    const pid_t tid = at_main.tid;
    const std::uint64_t main_pc = s.stack(tid).front().pc();
    const int in_sq = break_at(s, "sq");

    CHECK_THROWS_WITH(eval_int(s, tid, "sq(3)"),
                      "The program being debugged stopped while in a function called from GDB.\n"
                      "Evaluation of the expression containing the function\n"
                      "(sq) will be abandoned.\n"
                      "When the function is done executing, GDB will silently stop.");
    CHECK(innermost(s, tid) == "sq");
    CHECK(s.breakpoints().at(in_sq).hit_count == 1);

    // sq returns to the call's dummy frame: gdb pops it and stops without a word, in main.
    stop_report back = decide_stop(s, resume_and_wait(s));
    CHECK(back.kind == stop_class::abandoned_call_done);
    CHECK(innermost(s, tid) == "main");
    CHECK(s.stack(tid).front().pc() == main_pc);
    s.require_process().kill();
}
