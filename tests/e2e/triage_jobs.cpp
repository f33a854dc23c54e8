// `ompdbg triage` on real `mpirun` jobs beyond the ring deadlock (triage.cpp): a core of the
// one rank that crashed, ranks waiting in a collective that one rank never entered, and
// every rank inside the same collective while the job still progresses. Ground truth is
// what each rank logs about itself (MPI-LOG lines, examples/mpi/mpi_example_log.h) and
// /proc; after every live triage the job is released and must finish correctly.
#include <sys/types.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
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

/// Waits until `count` distinct ranks logged a line matching `state` ("state=in_barrier");
/// returns rank → pid (empty when the job did not get there in time).
std::map<int, pid_t> wait_for_ranks(background_process& job, const std::string& state, std::size_t count) {
    std::map<int, pid_t> pids;
    std::regex re("MPI-LOG rank=(\\d+) pid=(\\d+) " + state);
    while (pids.size() < count) {
        auto l = job.wait_for_line(re, 120s);
        if (!l) {
            return {};
        }
        std::smatch m;
        std::regex_search(*l, m, re);
        pids[std::stoi(m[1])] = std::stoi(m[2]);
    }
    return pids;
}

/// The system call thread `pid` is blocked in (/proc/PID/syscall's first field), or -1.
long blocked_syscall(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
    std::string first;
    in >> first;
    try {
        return first == "running" || first.empty() ? -1 : std::stol(first);
    } catch (const std::exception&) {
        return -1;
    }
}

}  // namespace

TEST_CASE("triage --core of the one MPI rank that aborted: rank 2, SIGABRT, its frame, exit 5",
          "[e2e][triage][mpi][core]") {
    REQUIRE(fs::exists(mpirun()));
    fs::path dir = fs::temp_directory_path() / ("ompdbg-triage-rank-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string prog = mpi_example("mpi_rank_abort");
    // Every rank runs under `ompdbg -batch` (as users run `mpirun gdb -batch -ex run`): rank
    // 2 aborts, its debugger stops at SIGABRT and writes core.PID in the job's directory;
    // mpirun then ends the job (a rank whose debugger sees the SIGCONT of that may write
    // its own core.PID too).
    auto job = run(mpirun_argv(3, {ompdbg_binary, "-batch", "-ex", "run", "-ex", "generate-core-file", prog}),
                   run_options()
                       .set_env("OMPI_MCA_rmaps_base_oversubscribe", "1")
                       .in_dir(dir.string())
                       .timeout_after(240s));
    INFO(job.all());
    REQUIRE_FALSE(job.timed_out);
    std::smatch m;
    REQUIRE(std::regex_search(job.out, m, std::regex(R"(MPI-LOG rank=2 pid=(\d+) state=aborting)")));
    const std::string pid = m[1];
    fs::path core = dir / ("core." + pid);
    REQUIRE(fs::exists(core));
    CHECK_THAT(job.out, Catch::Contains("received signal SIGABRT"));

    auto r = triage({"--core", prog, core.string()});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 5);
    CHECK_THAT(r.out, Catch::Contains("Triage of Core " + core.string() + " of " + prog + " (process " + pid +
                                      ", MPI rank 2)"));
    CHECK_FALSE(line_with(r.out, {"== Rank 2 (pid " + pid + ")"}).empty());
    const std::string abort_at = "fail_here at " + example_location("mpi/mpi_rank_abort.c", "rank_abort");
    CHECK_FALSE(line_with(r.out, {abort_at, "[1 thread]"}).empty());
    CHECK_THAT(r.out, Catch::Contains("Verdict: crashed: rank 2 (process " + pid + ") was killed by SIGABRT in thread 1 at " +
                                      abort_at));

    auto j = triage({"--json", "--core", prog, core.string()});
    INFO(j.all());
    CHECK(j.exit_code == 5);
    auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["target"]["kind"] == "core");
    CHECK(doc["target"]["signal"] == "SIGABRT");
    CHECK(doc["target"]["core"] == core.string());
    REQUIRE(doc["processes"].size() == 1);
    CHECK(doc["processes"][0]["rank"] == 2);
    CHECK(std::to_string(doc["processes"][0]["pid"].get<pid_t>()) == pid);
    CHECK(doc["verdict"]["kind"] == "crashed");
    CHECK(doc["verdict"]["exit_status"] == 5);
    CHECK(doc["exit_status"] == 5);
    fs::remove_all(dir);
}

TEST_CASE("triage: ranks 1-3 in MPI_Barrier and rank 0 never entered it: the finding names rank 0, exit 4",
          "[e2e][triage][mpi]") {
    REQUIRE(fs::exists(mpirun()));
    background_process job(mpirun_argv(4, {mpi_example("mpi_missing_rank")}),
                           run_options().set_env("OMPI_MCA_rmaps_base_oversubscribe", "1").timeout_after(300s));
    // Ranks 1-3 log from inside MPI_Barrier (a PMPI wrapper); rank 0 logs before sigwait.
    // The lines come in any order.
    std::map<int, std::string> state;
    pid_t rank0 = 0;
    std::regex re(R"(MPI-LOG rank=(\d+) pid=(\d+) state=(in_barrier|holding))");
    while (state.size() < 4) {
        auto l = job.wait_for_line(re, 120s);
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, re);
        state[std::stoi(m[1])] = m[3];
        if (m[1] == "0") {
            rank0 = std::stoi(m[2]);
        }
    }
    CHECK(state == std::map<int, std::string>{{0, "holding"}, {1, "in_barrier"}, {2, "in_barrier"}, {3, "in_barrier"}});
    // Rank 0 sleeps in sigwait (rt_sigtimedwait, 128) before the triage looks at it.
    for (int i = 0; i < 6000 && blocked_syscall(rank0) != 128; ++i) {
        REQUIRE(job.running());
        usleep(10000);
    }
    REQUIRE(blocked_syscall(rank0) == 128);

    auto r = triage({std::to_string(job.pid()), "--samples", "2", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 4);
    std::string finding = line_with(r.out, {"rank 1-3 wait in MPI_Barrier; rank 0 never entered it"});
    CHECK_THAT(finding, Catch::Contains("rank 0 is in hold_until_sigusr1 at mpi_example_log.h:"));
    std::string verdict = line_with(r.out, {"Verdict: hang: no thread moved in 2 samples"});
    CHECK_FALSE(verdict.empty());
    // Ranks 1-3 poll for progress inside MPI_Barrier (CPU time moves), but no message does.
    CHECK_THAT(verdict, Catch::Contains("3 threads of rank 1-3 busy-wait in MPI_Barrier"));
    CHECK_THAT(verdict, Catch::Contains("no MPI message moved"));
    CHECK_THAT(r.out, Catch::Contains("No cycle in the wait-for graph."));
    // The merged tree: ranks 1-3 through the program's MPI_Barrier wrapper into the library.
    CHECK_FALSE(line_with(r.out, {"main at " + example_location("mpi/mpi_missing_rank.c", "missing_rank_barrier"),
                                  "[rank 1-3, 3 threads]"})
                    .empty());
    CHECK_FALSE(line_with(r.out, {"PMPI_Barrier [rank 1-3, 3 threads]"}).empty());

    // The job runs on: released, every rank gets through the barrier.
    CHECK(tracer_of(job.pid()) == 0);
    ::kill(rank0, SIGUSR1);
    auto done = wait_for_ranks(job, "state=done", 4);
    CHECK(done.size() == 4);
    auto end = job.wait_exit(120s);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}

TEST_CASE("triage: every rank in the same MPI_Allreduce while the job progresses is no deadlock, exit 0",
          "[e2e][triage][mpi]") {
    REQUIRE(fs::exists(mpirun()));
    background_process job(mpirun_argv(4, {mpi_example("mpi_slow_allreduce")}),
                           run_options().set_env("OMPI_MCA_rmaps_base_oversubscribe", "1").timeout_after(300s));
    // Each rank logs from inside its reduction operation, called inside MPI_Allreduce.
    auto in_reduce = wait_for_ranks(job, "op=in_reduce", 4);
    REQUIRE(in_reduce.size() == 4);

    auto r = triage({"--json", std::to_string(job.pid()), "--samples", "3", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["target"]["kind"] == "mpi-job");
    CHECK(doc["verdict"]["kind"] == "progressing");
    CHECK(doc["verdict"]["exit_status"] == 0);
    CHECK(doc["deadlock"]["cycles"].empty());
    std::vector<std::string> findings = doc["findings"];
    CHECK(std::find(findings.begin(), findings.end(), "all 4 ranks are in MPI_Allreduce") != findings.end());
    // Every rank's main thread moved (its reduction keeps waking up), each rank by its pid.
    std::set<int> moved_ranks = doc["movement"]["moved_ranks"];
    CHECK(moved_ranks == std::set<int>{0, 1, 2, 3});
    REQUIRE(doc["processes"].size() == 4);
    for (const auto& p : doc["processes"]) {
        int rank = p["rank"];
        CHECK(p["pid"] == in_reduce[rank]);
        CHECK(p["mpi_call"] == "MPI_Allreduce");
        for (const auto& t : p["threads"]) {
            if (t["tid"] == p["pid"]) {
                CHECK(t["moved"] == true);
                CHECK_THAT(t["where"].get<std::string>(),
                           Catch::Contains("slow_sum at " +
                                           example_location("mpi/mpi_slow_allreduce.c", "slow_sum_wait")));
            }
        }
    }
    std::vector<std::string> text = doc["text"];
    bool verdict_line = false;
    for (const auto& l : text) {
        verdict_line = verdict_line || l.rfind("Verdict: progressing: ", 0) == 0;
    }
    CHECK(verdict_line);

    // Released, the collective completes with the right sum on every rank.
    for (auto [rank, pid] : in_reduce) {
        ::kill(pid, SIGUSR1);
    }
    std::regex done(R"(MPI-LOG rank=(\d+) pid=\d+ state=done sum=(\d+))");
    std::set<int> finished;
    while (finished.size() < 4) {
        auto l = job.wait_for_line(done, 120s);
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, done);
        CHECK(m[2] == "6");   // 0 + 1 + 2 + 3
        finished.insert(std::stoi(m[1]));
    }
    auto end = job.wait_exit(120s);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}

TEST_CASE("triage: ranks busy in MPI_Allreduce in a loop are progressing: their messages move, exit 0",
          "[e2e][triage][mpi]") {
    REQUIRE(fs::exists(mpirun()));
    background_process job(mpirun_argv(4, {mpi_example("mpi_allreduce_loop")}),
                           run_options().set_env("OMPI_MCA_rmaps_base_oversubscribe", "1").timeout_after(300s));
    auto looping = wait_for_ranks(job, "state=looping", 4);
    REQUIRE(looping.size() == 4);

    auto r = triage({"--json", std::to_string(job.pid()), "--samples", "3", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["verdict"]["kind"] == "progressing");
    std::string verdict = doc["verdict"]["text"];
    CHECK_THAT(verdict, Catch::StartsWith("progressing: busy-waiting, making progress: rank 0-3 sent or matched"));
    CHECK_THAT(verdict, Catch::Contains("Open MPI's message sequence numbers"));
    // Every rank's messages moved, also between the last two samples.
    REQUIRE(doc["movement"]["mpi_messages"].is_array());
    std::set<int> ranks;
    for (const auto& m : doc["movement"]["mpi_messages"]) {
        CHECK(m["last_interval"].get<long>() > 0);
        CHECK(m["total"].get<long>() >= m["last_interval"].get<long>());
        ranks.insert(m["rank"].get<int>());
    }
    CHECK(ranks == std::set<int>{0, 1, 2, 3});
    for (const auto& p : doc["processes"]) {
        CHECK(p["pid"] == looping[p["rank"].get<int>()]);
    }
    // Momentary waits of a job whose messages move are no findings.
    for (const auto& f : doc["findings"]) {
        CHECK_THAT(f.get<std::string>(), !Catch::StartsWith("starved:"));
    }

    // Released through rank 0, every rank leaves after the same iteration with right sums.
    ::kill(looping[0], SIGUSR1);
    std::regex done(R"(MPI-LOG rank=(\d+) pid=\d+ state=done iterations=(\d+) sum=(\d+) sums_ok=(\d))");
    std::set<std::string> iterations;
    std::set<int> finished;
    while (finished.size() < 4) {
        auto l = job.wait_for_line(done, 120s);
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, done);
        CHECK(m[3] == "6");
        CHECK(m[4] == "1");
        iterations.insert(m[2]);
        finished.insert(std::stoi(m[1]));
    }
    CHECK(iterations.size() == 1);
    auto end = job.wait_exit(120s);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
}
