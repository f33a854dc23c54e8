// The hang rule of triage's verdict (triage_verdict.cpp) on hand-built samples: a thread in
// the program's own code whose stack stood still is evidence of a hang only when it could
// have moved. One that was runnable all along but got no CPU time (a loaded machine) proves
// nothing: the verdict is "inconclusive", never "hang" (a verdict is a promise).

#include <catch2/catch.hpp>

#include <chrono>

#include "ompdbg/debugger/triage/triage_model.hpp"

namespace triage = ompdbg::debugger::triage;

namespace {

/// One sample of process 100 with one thread in `main` (the program's code, or a library's
/// when `in_program` is false), its /proc state letter and CPU ticks as given.
triage::snapshot sample(char run_state, long cpu_ticks, bool in_program, std::chrono::milliseconds at) {
    triage::snapshot s;
    s.kind = "process";
    s.pid = 100;
    s.when = std::chrono::steady_clock::time_point(at);
    triage::process_view p;
    p.pid = 100;
    triage::thread_view t;
    t.tid = 100;
    t.number = 1;
    t.frames = {"main at work.c:10"};
    t.user_pcs = {0x401234};
    t.where = "main at work.c:10";
    t.in_program = in_program;
    t.run_state = run_state;
    t.cpu_ticks = cpu_ticks;
    t.switches = 7;
    p.threads.push_back(t);
    s.procs.push_back(p);
    return s;
}

triage::verdict verdict_of(const std::vector<triage::snapshot>& snaps) {
    auto m = triage::compare(snaps);
    auto cycles = triage::weigh_cycles(snaps, m);
    return triage::decide(snaps, m, cycles, {});
}

using std::chrono::milliseconds;

}  // namespace

TEST_CASE("triage verdict: a runnable thread of the program that got no CPU time is no evidence of a hang",
          "[cli][triage]") {
    auto v = verdict_of({sample('R', 50, true, milliseconds(0)), sample('R', 50, true, milliseconds(300)),
                         sample('R', 50, true, milliseconds(600))});
    CHECK(v.kind == "inconclusive");
    CHECK(v.exit_status == triage::triage_nothing_wrong);
    CHECK_THAT(v.text, Catch::StartsWith("inconclusive: no thread moved in 3 samples over 0.6 s, but 1 thread in "
                                         "the program's own code stayed runnable and got no CPU time"));
}

TEST_CASE("triage verdict: a thread spinning in place on the CPU is a hang", "[cli][triage]") {
    auto v = verdict_of({sample('R', 50, true, milliseconds(0)), sample('R', 80, true, milliseconds(600))});
    CHECK(v.kind == "hang");
    CHECK(v.exit_status == triage::triage_hang);
    CHECK_THAT(v.text, Catch::Contains("busy-waits in main at work.c:10"));
}

TEST_CASE("triage verdict: a thread asleep in place is a hang", "[cli][triage]") {
    auto v = verdict_of({sample('S', 50, true, milliseconds(0)), sample('S', 50, true, milliseconds(600))});
    CHECK(v.kind == "hang");
    CHECK(v.exit_status == triage::triage_hang);
}

TEST_CASE("triage verdict: a runnable thread without CPU time waiting inside a library still allows a hang",
          "[cli][triage]") {
    // Waiting in the runtime (a barrier, an MPI call) is what a hung thread does; only a
    // thread in the program's own code is expected to show movement.
    auto v = verdict_of({sample('R', 50, false, milliseconds(0)), sample('R', 50, false, milliseconds(600))});
    CHECK(v.kind == "hang");
}
