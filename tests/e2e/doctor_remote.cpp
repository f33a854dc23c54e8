// `ompdbg --rsh RSH doctor --host HOST [PID]` on hosts simulated with Linux namespaces
// (tests/cluster/): the real gdbserver of the host, started through the cluster's rsh
// script as a job's ranks would reach it. Ground truth: what gdbserver says of itself
// (`gdbserver --version`), the kernel's Yama setting, what the OpenMP program prints about
// its team, and the process's /proc/PID/status on its host after the doctor left it.
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "ompdbg_test_paths.hpp"

namespace fs = std::filesystem;
using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace std::chrono_literals;

namespace {

std::string omp_example(const std::string& name) { return std::string(examples_dir) + "/openmp/" + name; }

run_result doctor_on(const simulated_cluster& cluster, const std::vector<std::string>& args) {
    std::vector<std::string> argv{ompdbg_binary, "--rsh", cluster.rsh(), "doctor"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, cluster.options(run_options().timeout_after(120s)));
}

/// The report line of check `name` ("  ok       agent           ..."), or "" when absent.
std::string check_line(const std::string& out, const std::string& name) {
    std::regex re("^  (ok|info|warn|missing) +" + name + " {2,}.*$", std::regex::multiline);
    std::smatch m;
    return std::regex_search(out, m, re) ? m.str(0) : std::string();
}

std::string status_of(const std::string& out, const std::string& name) {
    std::istringstream in(check_line(out, name));
    std::string word;
    in >> word;
    return word;
}

/// The first line gdbserver prints about its version (the same binary the hosts run).
std::string gdbserver_version() {
    auto r = run({"/usr/bin/gdbserver", "--version"});
    return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST_CASE("doctor --host HOST PID checks the host's agent, its features, ptrace there and a real OMPD query of "
          "the process, which runs on",
          "[doctor][e2e][remote]") {
    if (!fs::exists(omp_example("omp_barrier_stuck"))) {
        WARN("OpenMP examples not built (no OMPD-enabled libomp in the bootstrap cache): skipped");
        return;
    }
    simulated_cluster cluster({"node1"});
    background_process prog(cluster.on_host("node1", {omp_example("omp_barrier_stuck")}),
                            cluster.options(run_options().set_env("OMP_DEBUG", "enabled")));
    auto pid_line = prog.next_line(60s);
    REQUIRE(pid_line);
    std::string pid = *pid_line;
    auto stuck = prog.wait_for_line(std::regex("truth: stuck team_size=(\\d+)"), 60s);
    REQUIRE(stuck);
    std::smatch m;
    REQUIRE(std::regex_search(*stuck, m, std::regex("team_size=(\\d+)")));

    auto r = doctor_on(cluster, {"--host", "node1", pid});
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("ompdbg doctor: process " + pid + " on host node1\n"));
    CHECK(status_of(r.out, "agent") == "ok");
    CHECK_THAT(check_line(r.out, "agent"), Catch::Contains(gdbserver_version() + " on host node1, started by `" +
                                                           cluster.rsh() + " node1 gdbserver --multi -`"));
    CHECK(status_of(r.out, "agent features") == "ok");
    CHECK(status_of(r.out, "ptrace") == "ok");
    std::string yama = fs::exists("/proc/sys/kernel/yama/ptrace_scope") ? "Yama ptrace_scope" : "no Yama LSM";
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("on host node1: " + yama) &&
                                               Catch::Contains("gdbserver runs as user 0 with CAP_SYS_PTRACE"));
    CHECK_THAT(check_line(r.out, "program"), Catch::Contains("process " + pid + " on host node1 runs " +
                                                             omp_example("omp_barrier_stuck")));
    CHECK(status_of(r.out, "openmp runtime") == "ok");
    CHECK(status_of(r.out, "OMP_DEBUG") == "ok");
    CHECK(status_of(r.out, "libompd") == "ok");
    CHECK(status_of(r.out, "ompd query") == "ok");
    // The program's own team size is the number of OpenMP threads libompd must report.
    CHECK_THAT(check_line(r.out, "ompd query"), Catch::Contains(": " + m.str(1) + " OpenMP threads"));
    // Detached: on its host it is neither traced nor stopped.
    auto status = run({cluster.rsh(), "node1", "cat /proc/" + pid + "/status"}, cluster.options());
    INFO(status.out);
    CHECK(std::regex_search(status.out, std::regex(R"((^|\n)TracerPid:\s+0\n)")));
    CHECK_FALSE(std::regex_search(status.out, std::regex(R"((^|\n)State:\s+t)")));
    CHECK(prog.running());
}

TEST_CASE("doctor --host on a host without gdbserver names the host and how to install it", "[doctor][e2e][remote]") {
    simulated_cluster cluster({"node2"}, {"node2"});
    auto r = doctor_on(cluster, {"--host", "node2"});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::StartsWith("ompdbg doctor: host node2\n"));
    CHECK(status_of(r.out, "agent") == "missing");
    CHECK_THAT(check_line(r.out, "agent"), Catch::Contains("gdbserver is not installed on host node2"));
    CHECK_THAT(r.out, Catch::Contains("fix: install gdbserver on node2"));
}

TEST_CASE("doctor --host HOST PID with a pid its host does not have says so, never looking here",
          "[doctor][e2e][remote]") {
    simulated_cluster cluster({"node1"});
    // This test's own pid exists here, not in node1's PID namespace.
    std::string pid = std::to_string(::getpid());
    auto r = doctor_on(cluster, {"--host", "node1", pid});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(status_of(r.out, "agent") == "ok");
    CHECK(status_of(r.out, "ptrace") == "missing");
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("no process " + pid + " on host node1"));
}
