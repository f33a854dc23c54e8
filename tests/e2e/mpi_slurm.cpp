// srun jobs (issue 17, item 11) against a real one-node Slurm that each test starts as
// root under a temp dir (tests/support/slurm_cluster.sh: munged with its own key and
// socket, slurmctld and slurmd with a private SLURM_CONF, all on loopback) and shuts down
// when it ends, also when it fails. Slurm starts the tasks of a debugged step stopped with
// SIGSTOP; ompdbg must acquire them through srun's MPIR and let them run. The tasks are
// examples/slurm_task, no MPI program: what they print about themselves is the truth.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>

#include "cli_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

bool slurm_installed() {
    for (const char* b : {"/usr/bin/srun", "/usr/bin/scontrol", "/usr/bin/sinfo", "/usr/sbin/slurmctld",
                          "/usr/sbin/slurmd", "/usr/sbin/slurmstepd", "/usr/sbin/munged"}) {
        if (!std::filesystem::exists(b)) {
            return false;
        }
    }
    return true;
}

/// A private Slurm up for the lifetime of the object (slurm_cluster.sh up/down). Its daemons
/// listen on fixed ports, so two tests of parallel ctest take turns through a lock file.
class slurm_cluster {
public:
    slurm_cluster() {
        lock_ = ::open("/tmp/ompdbg-slurm-cluster.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        REQUIRE(lock_ >= 0);
        REQUIRE(::flock(lock_, LOCK_EX) == 0);
        char tmpl[] = "/tmp/ompdbg-slurm-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        dir_ = tmpl;
        auto r = run({script(), "up", dir_}, run_options().timeout_after(std::chrono::seconds(60)));
        up_ = r.ok();
        up_output_ = r.all();
    }
    ~slurm_cluster() {
        run({script(), "down", dir_}, run_options().timeout_after(std::chrono::seconds(60)));
        ::close(lock_);  // releases the lock for the next test's cluster
    }
    slurm_cluster(const slurm_cluster&) = delete;
    slurm_cluster& operator=(const slurm_cluster&) = delete;

    /// Holds the start of the next step in the cluster's Prolog (slurm_cluster.sh) until
    /// open_spawn_gate(): srun has sent its launch request, its tasks do not exist yet.
    void hold_spawn() {
        REQUIRE(::mkfifo((dir_ + "/spawn-gate").c_str(), 0600) == 0);
        REQUIRE(::mkfifo((dir_ + "/prolog-reached").c_str(), 0600) == 0);
    }
    /// Waits until the Prolog holds the step (it writes "reached" to prolog-reached).
    bool spawn_held() const {
        background_process reader({"timeout", "60", "cat", dir_ + "/prolog-reached"});
        return reader.wait_for_line(std::regex("^reached$"), std::chrono::seconds(60)).has_value();
    }
    /// Holds each task of the next steps between its fork and its execve until a debugger
    /// traces it (the TaskProlog of slurm_cluster.sh): srun has published its pid by then.
    void hold_exec_until_traced() {
        int fd = ::open((dir_ + "/exec-when-traced").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        ::close(fd);
    }
    void open_spawn_gate() const {
        run({"timeout", "60", "sh", "-c", "echo go > \"$0\"", dir_ + "/spawn-gate"});
    }

    bool is_up() const { return up_; }
    const std::string& up_output() const { return up_output_; }
    std::string conf() const { return dir_ + "/slurm.conf"; }
    run_options options(std::chrono::seconds timeout = std::chrono::seconds(120)) const {
        return run_options().set_env("SLURM_CONF", conf()).timeout_after(timeout);
    }

private:
    static std::string script() { return std::string(support_source_dir) + "/slurm_cluster.sh"; }
    int lock_ = -1;
    std::string dir_;
    bool up_ = false;
    std::string up_output_;
};

std::string task_program() { return std::string(examples_dir) + "/slurm_task"; }

/// A private Slurm that is up for the test, or nullptr (with a warning) where Slurm is not
/// installed: the test then has nothing to check.
std::unique_ptr<slurm_cluster> cluster_for_test() {
    if (!slurm_installed()) {
        WARN("skipped: Slurm is not installed (scripts/bootstrap installs slurm-wlm and munge)");
        return nullptr;
    }
    REQUIRE(std::filesystem::exists(task_program()));
    auto cluster = std::make_unique<slurm_cluster>();
    INFO(cluster->up_output());
    REQUIRE(cluster->is_up());
    return cluster;
}

/// rank -> pid from the tasks' own "task R of N pid P" lines.
std::map<int, int> pids_printed(const std::string& out) {
    std::map<int, int> m;
    std::regex re(R"(^task (\d+) of \d+ pid (\d+)$)");
    for (auto& l : lines_of(out)) {
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[1])] = std::stoi(mm[2]);
        }
    }
    return m;
}

/// rank -> pid of the `n` tasks of `job`, from the lines they print when they start.
std::map<int, int> wait_for_tasks(background_process& job, int n) {
    std::map<int, int> printed;
    std::regex re("^task (\\d+) of " + std::to_string(n) + " pid (\\d+)$");
    while (printed.size() < static_cast<std::size_t>(n)) {
        auto l = job.wait_for_line(re, std::chrono::seconds(60));
        REQUIRE(l);
        auto one = pids_printed(*l);
        printed.insert(one.begin(), one.end());
    }
    return printed;
}

/// `mpi ranks` listed each task with the pid it printed ("* 0     ompdbgnode  1234  ...").
void check_ranks_listed(const std::string& out, const std::map<int, int>& printed) {
    for (auto& [rank, pid] : printed) {
        std::regex row("^[* ] " + std::to_string(rank) + R"(\s+\S+\s+)" + std::to_string(pid) + R"(\s)");
        bool listed = false;
        for (auto& l : lines_of(out)) {
            listed = listed || std::regex_search(l, row);
        }
        CHECK(listed);
    }
}

/// The `n` parked tasks of `job` say they were released, and srun ends with status 0. A
/// task released as it started (attached before its main ran) says so among the lines
/// wait_for_tasks went through: those count too.
void check_tasks_released(background_process& job, int n) {
    std::regex released(R"(^task \d+ released$)");
    std::set<std::string> done;
    for (auto& l : job.consumed_lines()) {
        if (std::regex_match(l, released)) {
            done.insert(l);
        }
    }
    while (done.size() < static_cast<std::size_t>(n)) {
        auto l = job.wait_for_line(released, std::chrono::seconds(60));
        REQUIRE(l);
        done.insert(*l);
    }
    auto end = job.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK(end->ok());
}

}  // namespace

TEST_CASE("slurm: run -- srun -O -n 4 acquires every task, a breakpoint hits in each, srun's exit status is shown",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    // Task 2 exits with 5: srun exits with the largest exit code of its tasks.
    // The test's Slurm names its node "ompdbgnode" (NodeName), not this machine's host name,
    // as clusters may: the user says it is this machine.
    auto args = ex_args({"set mpi-local-hosts ompdbgnode", "break task_work", "run", "continue", "continue",
                         "continue", "continue"});
    for (const char* a : {"run", "/usr/bin/srun", "-O", "-n", "4"}) {
        args.push_back(a);
    }
    args.insert(args.end(), {task_program(), "2", "5"});
    auto r = ompdbg_batch(args, cluster->options());
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "[MPI job: 4 ranks of " + task_program() + " acquired]"));
    auto printed = pids_printed(r.out);
    REQUIRE(printed.size() == 4);
    // Each hit is labelled with its rank ("[rank N]", then the stop report) and shows the
    // argument the task computed its rank from (Slurm's SLURM_PROCID).
    std::set<int> hit;
    auto lines = lines_of(r.out);
    std::regex label(R"(^\[rank (\d+)\]$)");
    std::regex hit_re(R"(Breakpoint 1, task_work \(rank=(\d+)\) at .*slurm_task\.c:)");
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
        std::smatch m1, m2;
        if (std::regex_match(lines[i], m1, label)) {
            for (std::size_t j = i + 1; j <= i + 2; ++j) {
                if (std::regex_search(lines[j], m2, hit_re)) {
                    CHECK(m1[1] == m2[1]);
                    hit.insert(std::stoi(m2[1]));
                }
            }
        }
    }
    CHECK(hit == std::set<int>{0, 1, 2, 3});
    for (auto& [rank, pid] : printed) {
        CHECK(has_line(r.out, "task " + std::to_string(rank) + " sum " + std::to_string(rank * (rank + 1) / 2)));
        CHECK(has_line(r.out, "[rank " + std::to_string(rank) + "] process " + std::to_string(pid) +
                                  " exited with code " + (rank == 2 ? "05" : "00")));
    }
    CHECK(has_line(r.out, "[srun exited with code 05]"));
}

TEST_CASE("slurm: attach to a running srun acquires every task of its step, and detach lets them finish",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    background_process job({"/usr/bin/srun", "-O", "-n", "3", task_program(), "park"}, cluster->options());
    auto printed = wait_for_tasks(job, 3);
    // The tasks wait in park() until `released` is set: release them from the debugger.
    // The node is "ompdbgnode", not this host's name: say so before the attach (see above).
    auto r = ompdbg_batch({"-ex", "set mpi-local-hosts ompdbgnode", "-ex", "attach " + std::to_string(job.pid()), "-ex",
                           "mpi ranks", "-ex", "rank all", "-ex", "print released = 1", "-ex", "detach"},
                          cluster->options());
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "[MPI job: 3 ranks of " + task_program() + " acquired]"));
    check_ranks_listed(r.out, printed);
    CHECK(has_line(r.out, "[MPI job: 3 ranks detached]"));
    check_tasks_released(job, 3);
}

TEST_CASE("slurm: OMPDBG_MPI_LOCAL_HOSTS names the node this host before `ompdbg attach SRUN_PID`, which no command "
          "can precede",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    background_process job({"/usr/bin/srun", "-O", "-n", "2", task_program(), "park"}, cluster->options());
    auto printed = wait_for_tasks(job, 2);
    // The verb form: the attach runs before every -ex command.
    auto r = ompdbg_batch({"-ex", "show mpi-local-hosts", "-ex", "mpi ranks", "-ex", "rank all", "-ex",
                           "print released = 1", "-ex", "detach", "-ex", "help set mpi-local-hosts", "attach",
                           std::to_string(job.pid())},
                          cluster->options().set_env("OMPDBG_MPI_LOCAL_HOSTS", "othername, ompdbgnode"));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "[MPI job: 2 ranks of " + task_program() + " acquired]"));
    CHECK(has_line(r.out, "More names of this host are \"othername,ompdbgnode\"."));
    check_ranks_listed(r.out, printed);
    CHECK(r.out.find("gdbserver via") == std::string::npos);   // traced here, not through an agent
    CHECK(has_line(r.out, "[MPI job: 2 ranks detached]"));
    CHECK(r.out.find("The environment variable OMPDBG_MPI_LOCAL_HOSTS") != std::string::npos);
    check_tasks_released(job, 2);
}

TEST_CASE("slurm: attach to an srun whose tasks have not started yet (pids missing from MPIR_proctable) waits "
          "for them, then acquires the job",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    cluster->hold_spawn();
    background_process job({"/usr/bin/srun", "-O", "-n", "3", task_program(), "park"}, cluster->options());
    REQUIRE(cluster->spawn_held());
    background_process dbg({ompdbg_binary, "--batch", "-ex", "set mpi-local-hosts ompdbgnode", "-ex",
                            "attach " + std::to_string(job.pid()), "-ex", "mpi ranks", "-ex", "rank all", "-ex",
                            "print released = 1", "-ex", "detach"},
                           cluster->options());
    // srun is attached and its table is not complete: ompdbg says it waits...
    auto waiting = dbg.wait_for_line(
        std::regex(R"(^Waiting for srun \(process \d+\) to start its MPI job's tasks: \d of 3 started\.\.\.$)"),
        std::chrono::seconds(60));
    INFO(dbg.stderr_text());
    REQUIRE(waiting);
    // ... and acquires the job once the step goes on and the tasks answer.
    cluster->open_spawn_gate();
    auto r = dbg.wait_exit(std::chrono::seconds(120));
    REQUIRE(r);
    INFO(r->all());
    CHECK(r->ok());
    CHECK(has_line(r->out, "[MPI job: 3 ranks of " + task_program() + " acquired]"));
    CHECK(has_line(r->out, "[MPI job: 3 ranks detached]"));
    auto printed = wait_for_tasks(job, 3);
    check_ranks_listed(r->out, printed);
    check_tasks_released(job, 3);
}

TEST_CASE("slurm: attach to an srun whose tasks are forked but have not executed their program yet acquires each "
          "task in its program",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    // srun has each task's pid while the task is still slurmstepd's fork: it executes
    // slurm_task only once ompdbg has attached it (the race the test above met under load).
    cluster->hold_spawn();
    cluster->hold_exec_until_traced();
    background_process job({"/usr/bin/srun", "-O", "-n", "3", task_program(), "park"}, cluster->options());
    REQUIRE(cluster->spawn_held());
    background_process dbg({ompdbg_binary, "--batch", "-ex", "set mpi-local-hosts ompdbgnode", "-ex",
                            "attach " + std::to_string(job.pid()), "-ex", "mpi ranks", "-ex", "rank all", "-ex",
                            "print released = 1", "-ex", "detach"},
                           cluster->options());
    auto waiting = dbg.wait_for_line(
        std::regex(R"(^Waiting for srun \(process \d+\) to start its MPI job's tasks: \d of 3 started\.\.\.$)"),
        std::chrono::seconds(60));
    INFO(dbg.stderr_text());
    REQUIRE(waiting);
    cluster->open_spawn_gate();
    auto r = dbg.wait_exit(std::chrono::seconds(120));
    REQUIRE(r);
    INFO(r->all());
    CHECK(r->ok());
    CHECK(has_line(r->out, "[MPI job: 3 ranks of " + task_program() + " acquired]"));
    // Each rank is the program: its variable is there to set.
    for (int n = 1; n <= 3; ++n) {
        CHECK(has_line(r->out, "$" + std::to_string(n) + " = 1"));
    }
    CHECK(r->err.find("No symbol") == std::string::npos);
    CHECK(has_line(r->out, "[MPI job: 3 ranks detached]"));
    auto printed = wait_for_tasks(job, 3);
    check_ranks_listed(r->out, printed);
    check_tasks_released(job, 3);
}

TEST_CASE("slurm: attach to an srun whose tasks do not start within mpi-spawn-timeout says so and debugs srun alone",
          "[e2e][mpi][slurm]") {
    auto cluster = cluster_for_test();
    if (!cluster) {
        return;
    }
    cluster->hold_spawn();
    background_process job({"/usr/bin/srun", "-O", "-n", "2", task_program(), "park"}, cluster->options());
    REQUIRE(cluster->spawn_held());
    auto r = ompdbg_batch({"-ex", "set mpi-spawn-timeout 1", "-ex", "show mpi-spawn-timeout", "-ex",
                           "attach " + std::to_string(job.pid()), "-ex", "info inferiors", "-ex", "detach"},
                          cluster->options());
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "Attaching to an MPI starter waits 1 seconds for its tasks to start."));
    CHECK(std::regex_search(r.err, std::regex(R"(warning: srun \(process \d+\) has not started its MPI job's )"
                                              R"(tasks \(0 of 2 in MPIR_proctable after 1 s\): debugging srun alone\.)")));
    CHECK(r.out.find("MPI job:") == std::string::npos);
    CHECK(std::regex_search(r.out, std::regex(R"(\* 1 +process \d+ .*/usr/bin/srun)")));
    // srun was let go unharmed: once the step goes on, its tasks start and say so.
    cluster->open_spawn_gate();
    auto printed = wait_for_tasks(job, 2);
    CHECK(printed.size() == 2);
}
