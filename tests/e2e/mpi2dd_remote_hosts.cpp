// MPI2DD jobs whose tables name other hosts (issue 18): the reference starter runs some
// ranks on a host simulated with Linux namespaces (`mpi2dd-run --rsh RSH --host HOST:N`,
// through the cluster's rsh script) and names that host, and the rank's pid there, in its
// proctable. ompdbg reaches the local ranks with ptrace and the others through one
// gdbserver agent of their host, started with the same script (--rsh). Ground truth: what
// each rank prints about itself (its pid is the one of its host's PID namespace).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>
#include <regex>
#include <set>

#include "cluster.hpp"
#include "mpi2dd_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi2dd;

namespace {

/// `ompdbg --rsh RSH --batch -ex C... run mpi2dd-run --rsh RSH --host HOST:N... -np NP app ARGS`.
run_result job_across(const simulated_cluster& cluster, const std::vector<std::string>& cmds,
                      const std::vector<std::string>& hosts, int np, const std::vector<std::string>& app_args = {},
                      run_options opts = {}) {
    REQUIRE(std::filesystem::exists(starter()));
    std::vector<std::string> args{"--rsh", cluster.rsh()};
    for (auto& a : ex_args(cmds)) {
        args.push_back(a);
    }
    args.insert(args.end(), {"run", starter(), "--rsh", cluster.rsh()});
    for (auto& h : hosts) {
        args.insert(args.end(), {"--host", h});
    }
    args.insert(args.end(), {"-np", std::to_string(np), app()});
    args.insert(args.end(), app_args.begin(), app_args.end());
    return ompdbg_batch(args, cluster.options(opts.timeout_after(std::chrono::seconds(180))));
}

/// A row of `mpi ranks` of an MPI2DD job across hosts.
struct host_row {
    int rank = -1;
    std::string world;
    int world_rank = -1;
    std::string host, reached;
    int pid = 0;
    std::string state;
};

/// world rank -> row, from the last `mpi ranks` table of `out`.
std::map<int, host_row> host_rows(const std::string& out) {
    std::map<int, host_row> m;
    std::regex re(R"(^[* ] (\d+)\s+(\S+)\s+(-?\d+)\s+(\S+)\s+(ptrace|gdbserver via \S+|-)\s+(\d+)\s+(\S+)\s+-\s+(\S+)$)");
    for (auto& l : lines_of(out)) {
        if (l.rfind("  Rank  Comm world", 0) == 0) {
            m.clear();
        }
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[3])] = {std::stoi(mm[1]), mm[2], std::stoi(mm[3]), mm[4], mm[5], std::stoi(mm[6]), mm[7]};
        }
    }
    return m;
}

std::string this_host() {
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

/// The MPI ranks (compute's argument) of the hits of breakpoint 1.
std::set<int> hits(const std::string& out) {
    std::set<int> hit;
    std::regex re(R"(Breakpoint 1, compute \(rank=(\d+)\) at .*mpi2dd_app\.c:)");
    for (auto& l : lines_of(out)) {
        std::smatch m;
        if (std::regex_search(l, m, re)) {
            hit.insert(std::stoi(m[1]));
        }
    }
    return hit;
}

}  // namespace

TEST_CASE("mpi2dd across hosts: ranks a starter places on another host are reached through that host's gdbserver, "
          "the others with ptrace, a breakpoint hits in every rank and the job runs to its end",
          "[e2e][mpi2dd][remote]") {
    simulated_cluster cluster({"node1"});
    auto r = job_across(cluster,
                        {"break compute", "start", "mpi ranks", "continue", "continue", "continue", "continue",
                         "continue"},
                        {"node1:2"}, 4);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line_containing(r.out, "[MPI job: 4 ranks of " + app() + " acquired through MPI2DD from mpi2dd-run"));
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 4);
    // The table came while every rank, here and there, was held at its gate.
    auto first_report = r.out.find("MPI2DD-LOG");
    auto listed = host_rows(r.out.substr(0, first_report));
    REQUIRE(listed.size() == 4);
    for (auto& p : printed) {
        INFO("rank " << p.rank);
        REQUIRE(listed.count(p.rank));
        auto& row = listed[p.rank];
        // Its pid as the rank itself sees it: node1's own PID namespace for ranks 2-3.
        CHECK(row.pid == p.pid);
        CHECK(row.world == p.world);
        CHECK(row.rank == p.rank);
        CHECK(row.state == "stopped");
        if (p.rank >= 2) {
            CHECK(row.host == "node1");
            CHECK(row.reached == "gdbserver via node1");
        } else {
            CHECK(row.host == this_host());
            CHECK(row.reached == "ptrace");
        }
    }
    CHECK(hits(r.out) == std::set<int>{0, 1, 2, 3});
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line_containing(r.out, "MPI2DD-LOG rank=" + std::to_string(rank) + " world="));
    }
    CHECK(std::regex_search(r.out, std::regex(R"(MPI2DD-LOG rank=3 world=\S+ done result=6)")));
    CHECK(has_line(r.out, "[mpi2dd-run exited with code 00]"));
}

TEST_CASE("mpi2dd across hosts: a pid the table names that does not exist on its host is one line naming the rank, "
          "pid and host, and the other ranks stay debuggable",
          "[e2e][mpi2dd][remote]") {
    // The last entry (rank 3, on node1) names a pid no host has; rank 3 itself waits at its
    // gate until the host ends.
    simulated_cluster cluster({"node1"});
    auto r = job_across(cluster, {"break compute", "start", "mpi ranks", "continue", "continue", "continue", "kill"},
                        {"node1:2"}, 4, {}, run_options().set_env("MPI2DD_RUN_CORRUPT", "pid-missing-last"));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.term_signal == 0);
    CHECK(std::regex_search(r.err, std::regex(R"((^|\n)warning: MPI2DD: not attaching to rank 3 of \S+ \(pid )"
                                              R"(1073741808\): process 1073741808 does not exist on host node1\.\n)")));
    auto listed = host_rows(r.out);
    REQUIRE(listed.size() == 4);
    CHECK(listed[3].state == "lost");
    CHECK(listed[3].reached == "-");
    CHECK(listed[2].reached == "gdbserver via node1");
    CHECK(listed[0].reached == "ptrace");
    // The others are debugged as ever: each reports its hit.
    CHECK(hits(r.out) == std::set<int>{0, 1, 2});
}

TEST_CASE("mpi2dd across hosts: the same pid on two hosts is two ranks, each reached through its own host's agent",
          "[e2e][mpi2dd][remote]") {
    // Each simulated host has its own PID namespace, started alike: the rank each runs
    // first gets the same pid on both, as on the nodes of a real cluster.
    simulated_cluster cluster({"node1", "node2"});
    auto r = job_across(cluster, {"break compute", "start", "mpi ranks", "continue", "continue", "continue", "continue"},
                        {"node1:1", "node2:1"}, 3);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line_containing(r.out, "[MPI job: 3 ranks of " + app() + " acquired through MPI2DD from mpi2dd-run"));
    auto printed = reports(r.out);
    REQUIRE(printed.size() == 3);
    std::map<int, int> pid_of;
    for (auto& p : printed) {
        pid_of[p.rank] = p.pid;
    }
    REQUIRE(pid_of[1] == pid_of[2]);   // the premise: one pid, two hosts
    auto listed = host_rows(r.out.substr(0, r.out.find("MPI2DD-LOG")));
    REQUIRE(listed.size() == 3);
    CHECK(listed[1].host == "node1");
    CHECK(listed[1].reached == "gdbserver via node1");
    CHECK(listed[2].host == "node2");
    CHECK(listed[2].reached == "gdbserver via node2");
    for (int rank : {1, 2}) {
        CHECK(listed[rank].pid == pid_of[rank]);
        CHECK(listed[rank].state == "stopped");
    }
    CHECK(hits(r.out) == std::set<int>{0, 1, 2});
    CHECK(has_line(r.out, "[mpi2dd-run exited with code 00]"));
}
