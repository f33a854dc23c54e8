// Fork children of a traced process are not followed: the tracer waits for each child's
// first stop, takes our int3s out of it and lets it go. The wait must not end before that
// stop comes, however busy the debugger is with other tracees' wake-ups, or the child is
// left in its ptrace stop for good (the MPI2DD hierarchical hang: a directory forked by the
// starter never ran).

#include "tracer_test_helpers.hpp"

#include <atomic>
#include <csignal>
#include <thread>

#include <unistd.h>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

TEST_CASE("every fork child is released while other wake-ups keep coming", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    constexpr int children = 64;
    auto p = process::launch(program("tracer_fork_burst"), {std::to_string(children)}, opts);
    // A site in the code the children run: a child that kept our int3 dies of SIGTRAP.
    p->add_breakpoint_site(virt_addr(exe_bias(*p) + nm_address(program("tracer_fork_burst"), "tick")));
    // What many tracees do to the debugger: SIGCHLD after SIGCHLD, each a byte in the
    // wake-up pipe that its waits sleep on.
    std::atomic<bool> done{false};
    std::thread storm([&] {
        while (!done.load()) {
            ::kill(::getpid(), SIGCHLD);
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    });
    struct stop_storm {
        std::atomic<bool>& done;
        std::thread& t;
        ~stop_storm() {
            done = true;
            t.join();
        }
    } guard{done, storm};
    stop_reason r;
    for (;;) {
        p->resume();
        r = wait_stop(*p, 120000);
        if (r.kind == stop_kind::signal && r.signo == SIGCHLD) {
            continue;   // the parent's own SIGCHLDs, passed on
        }
        break;
    }
    INFO(out.contents());
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(r.exit_code == 0);
    CHECK(out.contents() == "reaped 64 of 64, 64 exited with 3\n");
}
