// The model's MPI job acquisition without a front end (mpi/job_acquisition.hpp): a plain
// debugger::session, with an observer that records what it hears, launches a real
// `mpirun -np 2`, holds both ranks as its inferiors and ends the job; a process that is not
// a starter is left alone or refused with the message a user reads.

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ompdbg/debugger/mpi/job_acquisition.hpp"
#include "ompdbg/debugger/mpi/job_events.hpp"
#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/session/session_observer.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::string mpirun() { return std::string(ompdbg::test::cache_dir) + "/openmpi-4.1.4/bin/mpirun"; }
std::string stages() { return std::string(ompdbg::test::examples_dir) + "/mpi/mpi_stages"; }

/// Keeps what the model tells a front end about a job.
struct recording_observer final : session_observer {
    std::vector<acquired_job> acquired;
    std::vector<std::string> errors;
    std::vector<std::pair<std::size_t, bool>> ended;
    void job_acquired(const acquired_job& j) override { acquired.push_back(j); }
    void job_error(std::string_view text) override { errors.emplace_back(text); }
    void job_warning(std::string_view text) override { errors.emplace_back(text); }
    void job_ended(std::size_t ranks, bool killed) override { ended.emplace_back(ranks, killed); }
};

bool pid_exists(pid_t pid) {
    return pid > 0 && ::kill(pid, 0) == 0;
}

}  // namespace

TEST_CASE("mpi job acquisition: the model launches mpirun, holds every rank stopped and tells its observer, and "
          "kill ends the ranks and the starter",
          "[mpi]") {
    REQUIRE(std::filesystem::exists(mpirun()));   // scripts/bootstrap builds it
    REQUIRE(std::filesystem::exists(stages()));
    recording_observer obs;
    session s;
    s.set_observer(obs);
    job_options opts;
    int planted = 0;
    opts.plant_breakpoints = [&](session&) { ++planted; };
    start_mpi_job(s, mpirun(), {"--allow-run-as-root", "--oversubscribe", "-np", "2", stages()}, opts);

    REQUIRE(obs.acquired.size() == 1);
    CHECK(obs.acquired[0].ranks == 2);
    CHECK_FALSE(obs.acquired[0].mpi2dd);
    CHECK(std::filesystem::path(obs.acquired[0].executable).filename() == "mpi_stages");
    CHECK(obs.errors.empty());
    CHECK(planted == 2);   // the front end's breakpoints, once in each rank
    REQUIRE(s.inferiors().size() == 2);
    std::vector<pid_t> pids;
    for (int r = 0; r < 2; ++r) {
        auto& inf = *s.inferiors()[r];
        CHECK(inf.rank == r);
        REQUIRE(inf.process);
        CHECK(inf.process->is_alive());
        pids.push_back(inf.pid);
    }
    CHECK(s.current_index() == 0);
    CHECK(s.focus() == std::vector<std::size_t>{0, 1});
    auto* job = job_of(s);
    REQUIRE(job);
    CHECK(job->launched());
    REQUIRE(job->starter());
    pid_t starter = job->starter()->pid();
    CHECK(job->proctable().size() == 2);

    end_job(s, true);
    REQUIRE(obs.ended.size() == 1);
    CHECK(obs.ended[0] == std::pair<std::size_t, bool>{2, true});
    CHECK(job_of(s) == nullptr);
    CHECK(s.inferiors().size() == 1);
    CHECK_FALSE(s.process());
    // Killed and reaped: none of the job's processes is left.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto any_left = [&] {
        bool left = pid_exists(starter);
        for (pid_t p : pids) {
            left = left || pid_exists(p);
        }
        return left;
    };
    while (any_left() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_FALSE(any_left());
}

TEST_CASE("mpi job acquisition: a process that is not an MPI starter is left alone, or refused when one is required",
          "[mpi]") {
    recording_observer obs;
    session s;
    s.set_observer(obs);
    tracer::launch_options launch;
    launch.stdin_path = "/dev/null";
    auto proc = tracer::process::launch("/bin/sleep", {"30"}, launch);
    pid_t pid = proc->pid();
    CHECK_FALSE(attach_mpi_job(s, proc, false, {}));
    REQUIRE(proc);   // not taken
    CHECK(job_of(s) == nullptr);
    CHECK_THROWS_WITH(attach_mpi_job(s, proc, true, {}),
                      "Process " + std::to_string(pid) +
                          " (sleep) is not an MPI starter: it has no MPIR_Breakpoint/MPIR_proctable.");
    REQUIRE(proc);
    CHECK(obs.acquired.empty());
    CHECK(obs.errors.empty());
    proc->kill();
}
