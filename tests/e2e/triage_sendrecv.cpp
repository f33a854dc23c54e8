// A verdict is a promise (issue 17): `ompdbg triage` on a healthy halo exchange (every rank
// trading blocks with both ring neighbours through MPI_Sendrecv, examples/mpi/
// mpi_sendrecv_ring) must never say deadlock nor exit 3, with an eager and with a
// rendezvous block size; its momentary waits are no `starved:` findings. Ground truth: the
// iteration count rank 0 logs (the job moves on during and after the triage), and the
// job's own check of every block it received once released.

#include <sys/types.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"
#include "triage_common.hpp"

namespace fs = std::filesystem;
using namespace ompdbg::test;
using namespace ompdbg::test::triage_support;
using namespace std::chrono_literals;

namespace {

/// The next `state=looping iterations=N` line of rank 0: (its pid, N); (0, -1) on timeout.
std::pair<pid_t, long> next_iterations(background_process& job) {
    std::regex re(R"(MPI-LOG rank=0 pid=(\d+) state=looping iterations=(\d+))");
    auto l = job.wait_for_line(re, 120s);
    if (!l) {
        return {0, -1};
    }
    std::smatch m;
    std::regex_search(*l, m, re);
    return {std::stoi(m[1]), std::stol(m[2])};
}

/// Triage of the ring with blocks of `ints` ints: 3 samples while it runs, then the job is
/// released and must end with every block right.
void triage_healthy_ring(const std::string& ints) {
    REQUIRE(fs::exists(mpirun()));
    background_process job(mpirun_argv(4, {mpi_example("mpi_sendrecv_ring"), ints}),
                           run_options().set_env("OMPI_MCA_rmaps_base_oversubscribe", "1").timeout_after(300s));
    auto [rank0, before] = next_iterations(job);
    REQUIRE(before > 0);

    auto r = triage({"--json", std::to_string(job.pid()), "--samples", "3", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(r.exit_code != 3);
    auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["target"]["kind"] == "mpi-job");
    CHECK(doc["verdict"]["kind"] == "progressing");
    CHECK_THAT(doc["verdict"]["text"].get<std::string>(), !Catch::Contains("deadlock:"));
    CHECK(doc["deadlock"]["confirmed"] == false);
    for (const auto& f : doc["findings"]) {
        CHECK_THAT(f.get<std::string>(), !Catch::StartsWith("starved:"));
        CHECK_THAT(f.get<std::string>(), !Catch::StartsWith("waiting on a finished rank:"));
    }
    // The messages moved, as Open MPI's sequence numbers tell.
    REQUIRE(doc["movement"]["mpi_messages"].is_array());
    for (const auto& m : doc["movement"]["mpi_messages"]) {
        CHECK(m["total"].get<long>() > 0);
    }
    for (const auto& p : doc["processes"]) {
        if (p["rank"] == 0) {
            CHECK(p["pid"] == rank0);
        }
    }
    // The job ran on through the triage and after it.
    auto [same0, after] = next_iterations(job);
    CHECK(same0 == rank0);
    CHECK(after > before);

    ::kill(rank0, SIGUSR1);
    std::regex done(R"(MPI-LOG rank=(\d+) pid=\d+ state=done iterations=(\d+) data_ok=(\d))");
    std::set<int> finished;
    std::set<std::string> iterations;
    while (finished.size() < 4) {
        auto l = job.wait_for_line(done, 120s);
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, done);
        CHECK(m[3] == "1");
        iterations.insert(m[2]);
        finished.insert(std::stoi(m[1]));
    }
    CHECK(iterations.size() == 1);
    auto end = job.wait_exit(120s);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}

}  // namespace

TEST_CASE("triage: a healthy MPI_Sendrecv ring exchange of eager messages is progressing, never a deadlock",
          "[e2e][triage][mpi]") {
    triage_healthy_ring("16");   // 64 bytes: below every eager limit
}

TEST_CASE("triage: a healthy MPI_Sendrecv ring exchange of rendezvous messages is progressing, never a deadlock",
          "[e2e][triage][mpi]") {
    triage_healthy_ring("65536");   // 256 KiB: above every Open MPI eager limit
}
