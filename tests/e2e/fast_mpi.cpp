// Fast breakpoints in the ranks of `run -- mpirun` (issue 21): the launch environment's
// LD_PRELOAD of the agent reaches every rank mpirun starts on this host, so a condition is
// evaluated and a dprintf formatted in each rank, and `info breakpoints` names the path of
// each rank. Ground truth is the ranks' own (compute(rank) is called once in each).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mpi_job_common.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::mpi;

TEST_CASE("mpi: a condition and a dprintf run in the agent of every rank and info breakpoints says so per rank",
          "[e2e][mpi][fast]") {
    auto r = ompdbg_job({"break compute if rank == 1",
                         "dprintf " + example_location("mpi/mpi_stages.c", "compute_sink") + ",\"sink of rank %d\\n\",rank",
                         "run", "info breakpoints", "continue"},
                        3);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    // Only rank 1 stops: ranks 0 and 2 passed the condition in the target.
    CHECK(grep(r.out, R"(hit Breakpoint 1, compute \(rank=1\))").size() == 1);
    CHECK(grep(r.out, R"(hit Breakpoint 1, compute \(rank=[02]\))").empty());
    CHECK(has_line(r.out, "\tstop only if rank == 1 (target evaluation)"));
    CHECK(has_line(r.out, "\tranks 0-2: target evaluation"));
    CHECK(has_line(r.out, "\tranks 0-2: printed in the target"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    for (int rank = 0; rank < 3; ++rank) {
        CHECK(grep(r.out, "^sink of rank " + std::to_string(rank) + "$").size() == 1);
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi: with fast breakpoints off the ranks keep gdb's listing", "[e2e][mpi][fast]") {
    auto args = ex_args({"break compute if rank == 1", "run", "info breakpoints", "continue"});
    auto job = job_args(2);
    args.insert(args.end(), job.begin(), job.end());
    auto r = ompdbg_batch(args, run_options().set_env("OMPDBG_FAST_BREAKPOINTS", "off").timeout_after(std::chrono::seconds(180)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(grep(r.out, R"(hit Breakpoint 1, compute \(rank=1\))").size() == 1);
    CHECK(has_line(r.out, "\tstop only if rank == 1"));
    CHECK(grep(r.out, "^\tranks? ").empty());
}
