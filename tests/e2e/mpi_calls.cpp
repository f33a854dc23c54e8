// Function calls in an MPI job (issue 22): `print` with a call runs once in each focused
// rank, labelled `[rank N]`, in that rank's own process.

#include "mpi_job_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::mpi;

TEST_CASE("mpi: a call runs in the selected thread of every focused rank", "[e2e][mpi][calls]") {
    auto r = ompdbg_job({"break all_parked", "run", "rank all", "print (int)getpid()", "print compute(2)",
                         "rank 1", "print (int)getpid()", "rank all", "print released = 1", "delete", "continue"},
                        4, {"park"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto pids = pids_printed(r.out);
    REQUIRE(pids.size() == 4);
    // Each rank's getpid() answer is the pid that rank printed about itself.
    for (auto [rank, pid] : pids) {
        std::regex labelled("\\[rank " + std::to_string(rank) + "\\]\\n\\$\\d+ = " + std::to_string(pid) + "\\n");
        CHECK(std::regex_search(r.out, labelled));
    }
    // The focus on rank 1 alone: one more answer, rank 1's pid.
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(Focus: rank 1\.\n(\[rank 1\]\n)?\$\d+ = (\d+)\n)")));
    CHECK(std::stoi(m[2]) == pids[1]);
    // The job goes on unharmed after the calls.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}
