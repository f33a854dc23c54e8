// MPI jobs whose ranks run on other hosts (issue 18), on hosts simulated with Linux
// namespaces (tests/cluster/, support/cluster.hpp): the bootstrap Open MPI starts its ranks
// on them through its own rsh launcher (the cluster's rsh script), its traffic kept on
// loopback; ompdbg reaches each host's ranks through one gdbserver agent started with the
// same script (--rsh / OMPDBG_RSH). Ground truth: what the ranks print about themselves
// (their pid is the one of their host's PID namespace), and gdbserver's own process list
// on each host. Every wait is bounded; each test removes every host it made.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "mpi_job_common.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

// Some ranks of a host stop while others of it run (a rank's own continue, a job-wide
// stop): the agents run non-stop, each process stopped on its own (vCont;t).

namespace {

constexpr auto job_timeout = std::chrono::seconds(240);

/// A hostfile of `hosts` with two slots each, removed with the object.
struct hostfile {
    std::string path;
    explicit hostfile(const std::vector<std::string>& hosts) {
        path = "/tmp/ompdbg-hostfile-" + std::to_string(::getpid());
        std::ofstream out(path);
        for (auto& h : hosts) {
            out << h << " slots=2\n";
        }
    }
    ~hostfile() { std::filesystem::remove(path); }
};

/// `run mpirun --hostfile H ... -np RANKS mpi_stages ARGS`: Open MPI's rsh launcher over the
/// simulated hosts, every byte on loopback.
std::vector<std::string> job_over(const simulated_cluster& cluster, const hostfile& hf, int ranks,
                                  const std::vector<std::string>& prog_args = {},
                                  const std::string& program = mpi::stages()) {
    std::vector<std::string> a{mpi::mpirun(), "--allow-run-as-root", "--oversubscribe", "--hostfile", hf.path,
                               "--mca", "plm_rsh_agent", cluster.rsh(), "--mca", "oob_tcp_if_include", "lo",
                               "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo",
                               "--mca", "mpi_yield_when_idle", "1", "-np", std::to_string(ranks), program};
    a.insert(a.end(), prog_args.begin(), prog_args.end());
    return a;
}

/// ompdbg --rsh RSH --batch -ex CMD... run -- JOB.
run_result ompdbg_over(const simulated_cluster& cluster, const std::vector<std::string>& cmds,
                       const std::vector<std::string>& job) {
    std::vector<std::string> args{"--rsh", cluster.rsh()};
    for (auto& a : ex_args(cmds)) {
        args.push_back(a);
    }
    args.insert(args.end(), {"run", "--"});
    args.insert(args.end(), job.begin(), job.end());
    return ompdbg_batch(args, cluster.options(run_options().timeout_after(job_timeout)));
}

/// rank -> {host, pid, reached} from `mpi ranks` rows of a job across hosts.
struct rank_row {
    std::string host, pid, state, reached;
};
std::map<int, rank_row> ranks_listed(const std::string& out) {
    std::map<int, rank_row> m;
    std::regex re(R"(^[* ] (\d+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(ptrace|gdbserver via \S+|-)\s+(\S+)$)");
    for (auto& l : lines_of(out)) {
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[1])] = {mm[2], mm[3], mm[4], mm[5]};
        }
    }
    return m;
}

bool has_line_containing(const std::string& out, const std::string& piece) {
    return out.find(piece) != std::string::npos;
}

}  // namespace

TEST_CASE("mpi across hosts: run -- mpirun --hostfile reaches each host's ranks through one gdbserver agent, a "
          "breakpoint hits in every rank, bt and mpi stacks show remote ranks",
          "[e2e][mpi][remote]") {
    REQUIRE(std::filesystem::exists(mpi::mpirun()));
    simulated_cluster cluster({"node1", "node2"});
    hostfile hf({"node1", "node2"});
    auto r = ompdbg_over(cluster,
                         {"start", "mpi ranks", "break compute", "continue", "bt", "continue", "continue", "continue",
                          "break all_parked", "continue", "mpi stacks", "rank all", "print released = 1", "delete",
                          "continue"},
                         job_over(cluster, hf, 4, {"park"}));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "[MPI job: 4 ranks of " + mpi::stages() + " acquired]"));
    // Every rank on a simulated host, reached through that host's agent; the pids are the
    // ones the ranks print (their host's PID namespace), never looked up here.
    auto listed = ranks_listed(r.out);
    auto printed = mpi::pids_printed(r.out);
    REQUIRE(listed.size() == 4);
    REQUIRE(printed.size() == 4);
    std::set<std::string> hosts;
    for (auto& [rank, row] : listed) {
        INFO("rank " << rank);
        CHECK((row.host == "node1" || row.host == "node2"));
        CHECK(row.reached == "gdbserver via " + row.host);
        CHECK(row.pid == std::to_string(printed[rank]));
        hosts.insert(row.host);
    }
    CHECK(hosts.size() == 2);
    // The breakpoint hit in every rank, each with its own argument.
    std::set<int> hit;
    std::regex hit_re(R"(hit Breakpoint 1, compute \(rank=(\d+)\) at .*mpi_stages\.c:)");
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, hit_re)) {
            hit.insert(std::stoi(m[1]));
        }
    }
    CHECK(hit == std::set<int>{0, 1, 2, 3});
    // bt in a remote rank: its frames, symbolized from the same files here.
    CHECK(std::regex_search(r.out, std::regex(R"(#1 +0x[0-9a-f]+ in main \(argc=\d+, argv=0x[0-9a-f]+\) at .*mpi_stages\.c:\d+)")));
    // The merged stacks of ranks on two hosts.
    CHECK(has_line_containing(r.out, "main [rank 0-3]"));
    CHECK(has_line_containing(r.out, "wait_odd [rank 1,3]"));
    CHECK(has_line_containing(r.out, "all_parked [rank 0]"));
    CHECK(has_line_containing(r.out, "park [rank 1,3]"));
    // Released through `print` in every rank: each finishes.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}

TEST_CASE("mpi across hosts: a host without gdbserver is one line naming the host, and the ranks of the other host "
          "stay debuggable",
          "[e2e][mpi][remote]") {
    simulated_cluster cluster({"node1", "node2"}, {"node2"});
    hostfile hf({"node1", "node2"});
    auto r = ompdbg_over(cluster, {"start", "mpi ranks", "break compute", "continue", "continue", "kill"},
                         job_over(cluster, hf, 4));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.err, "Cannot reach rank 2-3 on host node2: gdbserver is not installed on host node2 (bash: line 1: "
                          "gdbserver: command not found (exit status 127)): install it there (Debian, Ubuntu: apt-get "
                          "install gdbserver)."));
    auto listed = ranks_listed(r.out);
    REQUIRE(listed.size() == 4);
    CHECK(listed[0].reached == "gdbserver via node1");
    CHECK(listed[1].reached == "gdbserver via node1");
    CHECK(listed[2].state == "lost");
    CHECK(listed[3].state == "lost");
    // Ranks 0 and 1 are debugged as ever: each reports its hit.
    std::set<int> hit;
    std::regex hit_re(R"(hit Breakpoint 1, compute \(rank=(\d+)\))");
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, hit_re)) {
            hit.insert(std::stoi(m[1]));
        }
    }
    CHECK(hit == std::set<int>{0, 1});
}

TEST_CASE("mpi across hosts: a remote shell that fails shows its own message, naming the host", "[e2e][mpi][remote]") {
    simulated_cluster cluster({"node1"});
    hostfile hf({"node1"});
    // A remote shell that cannot log in (as ssh says it); Open MPI's own launcher works.
    std::string refusing = "sh -c 'echo \"ssh: connect to host $0 port 22: Connection refused\" >&2; exit 255'";
    std::vector<std::string> args{"--rsh", refusing, "--batch", "-ex", "start", "-ex", "mpi ranks", "-ex", "kill",
                                  "run", "--"};
    auto job = job_over(cluster, hf, 2);
    args.insert(args.end(), job.begin(), job.end());
    auto r = ompdbg_batch(args, cluster.options(run_options().timeout_after(job_timeout)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.err, "Cannot reach rank 0-1 on host node1: Cannot start the remote agent on host node1: ssh: "
                          "connect to host node1 port 22: Connection refused (exit status 255)"));
    auto listed = ranks_listed(r.out);
    REQUIRE(listed.size() == 2);
    CHECK(listed[0].state == "lost");
    CHECK(listed[1].state == "lost");
}

TEST_CASE("mpi across hosts: mpi deadlock finds the ring's cycle and mpi queues reads each remote rank's pending "
          "receive",
          "[e2e][mpi][remote][msgq]") {
    simulated_cluster cluster({"node1", "node2"});
    hostfile hf({"node1", "node2"});
    std::string prog = std::string(examples_dir) + "/mpi/mpi_ring_deadlock";
    // Every rank stops on the line of its MPI_Recv (4 hits), then each rank alone runs into
    // opal_progress, which MPI_Recv calls only once the receive is posted (the other rank
    // of its host stays stopped on the same agent).
    std::vector<std::string> cmds{"break " + example_location("mpi/mpi_ring_deadlock.c", "ring_recv"), "run",
                                  "continue", "continue", "continue", "delete", "break opal_progress"};
    for (int rank : {0, 1, 2, 3}) {
        cmds.push_back("rank " + std::to_string(rank));
        cmds.push_back("continue");
    }
    cmds.insert(cmds.end(), {"rank all", "delete", "mpi deadlock", "mpi queues", "kill"});
    // The remote shell from the environment this time (OMPDBG_RSH), not --rsh.
    auto args = ex_args(cmds);
    args.insert(args.end(), {"run", "--"});
    auto job = job_over(cluster, hf, 4, {}, prog);
    args.insert(args.end(), job.begin(), job.end());
    auto r = ompdbg_batch(args, cluster.options(run_options().set_env("OMPDBG_RSH", cluster.rsh()).timeout_after(job_timeout)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "Wait-for graph of 4 ranks: 4 blocked in point-to-point calls, 0 in collectives, "
                          "0 running, 0 finished."));
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(Deadlock: 0 -> (\d) -> (\d) -> (\d) -> 0, each blocked in MPI_Recv\(tag 7\))")));
    CHECK(std::set<std::string>{m[1], m[2], m[3]} == std::set<std::string>{"1", "2", "3"});
    // Each rank's posted receive, read by Open MPI's message-queue DLL through its agent.
    for (int rank = 0; rank < 4; ++rank) {
        INFO("rank " << rank);
        CHECK(std::regex_search(r.out, std::regex("Rank " + std::to_string(rank) + R"( \(pid \d+\): )")));
    }
    std::regex pending(R"(Pending receives \(1\):)");
    CHECK(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), pending), std::sregex_iterator()) == 4);
}

TEST_CASE("mpi across hosts: an agent killed while the job runs loses that host's ranks, one line each, and the "
          "others stay debuggable",
          "[e2e][mpi][remote]") {
    simulated_cluster cluster({"node1", "node2"});
    hostfile hf({"node1", "node2"});
    const std::regex prompt_re(R"(\(ompdbg\) $)");
    std::vector<std::string> args{ompdbg_binary, "--rsh", cluster.rsh(), "-ex", "break all_parked", "run", "--"};
    auto job = job_over(cluster, hf, 4, {"park"});
    args.insert(args.end(), job.begin(), job.end());
    background_process dbg(args, cluster.options());
    // Stopped with every rank parked (rank 0 in all_parked), then running again: the ranks
    // spin until released, which never happens here.
    REQUIRE(dbg.wait_for_output(prompt_re, job_timeout));
    dbg.write_stdin("continue\n");
    REQUIRE(dbg.wait_for_output(std::regex("Continuing\\."), std::chrono::seconds(60)));
    auto killed = run({cluster.rsh(), "node2", "kill -KILL $(pgrep -x gdbserver)"}, cluster.options());
    REQUIRE(killed.ok());
    auto lost2 = dbg.wait_for_line(std::regex(R"(^\[rank (2|3)\] process \d+ on host node2 is lost: Remote connection closed)"),
                                   std::chrono::seconds(60));
    INFO("ompdbg stderr:\n" << dbg.stderr_text());
    REQUIRE(lost2);
    auto lost3 = dbg.wait_for_line(std::regex(R"(^\[rank (2|3)\] process \d+ on host node2 is lost: )"),
                                   std::chrono::seconds(60));
    REQUIRE(lost3);
    // Ranks 0 and 1 still run under their agent: Ctrl-C stops them, and they answer.
    dbg.send_signal(SIGINT);
    REQUIRE(dbg.wait_for_output(prompt_re, std::chrono::seconds(60)));
    dbg.write_stdin("mpi ranks\n");
    auto table = dbg.wait_for_output(prompt_re, std::chrono::seconds(60));
    REQUIRE(table);
    auto listed = ranks_listed(*table);
    REQUIRE(listed.size() == 4);
    CHECK(listed[0].state == "stopped");
    CHECK(listed[1].state == "stopped");
    CHECK(listed[2].state == "lost");
    CHECK(listed[3].state == "lost");
    dbg.write_stdin("rank 1\nbt\n");
    auto bt = dbg.wait_for_output(std::regex(R"(in main \([^\n]*\n(.|\n)*\(ompdbg\) $)"), std::chrono::seconds(60));
    REQUIRE(bt);
    CHECK(std::regex_search(*bt, std::regex(R"(in park \(rank=1\) at .*mpi_stages\.c:\d+)")));
    dbg.write_stdin("kill\nquit\n");
    auto end = dbg.wait_exit(std::chrono::seconds(60));
    CHECK(end);
}

TEST_CASE("mpi across hosts: ompdbg --rsh RSH triage MPIRUN_PID attaches every remote rank through its host's agent, "
          "gathers, detaches, and the job runs on",
          "[e2e][mpi][remote][triage]") {
    simulated_cluster cluster({"node1", "node2"});
    hostfile hf({"node1", "node2"});
    background_process job(job_over(cluster, hf, 4, {"park"}), cluster.options());
    std::map<int, std::string> pid_of;   // rank -> its pid on its host, as it says
    std::regex re(R"(^rank (\d) of 4 pid (\d+)$)");
    while (pid_of.size() < 4) {
        auto l = job.wait_for_line(re, std::chrono::seconds(120));
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, re);
        pid_of[std::stoi(m[1])] = m[2];
    }
    auto r = ompdbg_batch({"--rsh", cluster.rsh(), "triage", std::to_string(job.pid()), "--samples", "2", "--interval",
                           "0.3"},
                          cluster.options(run_options().timeout_after(job_timeout)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    // The stacks of ranks on two hosts, merged (where the program parks each of them).
    CHECK(std::regex_search(r.out, std::regex(R"(main at mpi_stages\.c:\d+ \[rank 1,3, 2 threads\])")));
    CHECK(std::regex_search(r.out, std::regex(R"(park_root at mpi_stages\.c:\d+ \[rank 0, 1 thread\])")));
    CHECK(std::regex_search(r.out, std::regex(R"(park at mpi_stages\.c:\d+ \[rank 2, 1 thread\])")));
    // Each remote rank's message queues, read through its agent.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "Rank " + std::to_string(rank) + ": no pending operation"));
    }
    CHECK(std::regex_search(r.out, std::regex(R"(\nVerdict: )")));
    // Detached: every rank runs on, traced by nobody (gdbserver has let it go).
    for (auto& [rank, pid] : pid_of) {
        std::string host = rank < 2 ? "node1" : "node2";
        auto st = run({cluster.rsh(), host, "grep TracerPid /proc/" + pid + "/status"}, cluster.options());
        INFO("rank " << rank << " on " << host << ": " << st.all());
        CHECK(st.out == "TracerPid:\t0\n");
    }
    CHECK(job.running());
}

TEST_CASE("mpi across hosts: ompdbg --rsh RSH attach MPIRUN_PID acquires the remote ranks of a running job, and "
          "detach lets them run on",
          "[e2e][mpi][remote]") {
    simulated_cluster cluster({"node1", "node2"});
    hostfile hf({"node1", "node2"});
    background_process job(job_over(cluster, hf, 4, {"park"}), cluster.options());
    std::map<int, std::string> pid_of;
    std::regex re(R"(^rank (\d) of 4 pid (\d+)$)");
    while (pid_of.size() < 4) {
        auto l = job.wait_for_line(re, std::chrono::seconds(120));
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, re);
        pid_of[std::stoi(m[1])] = m[2];
    }
    auto r = ompdbg_batch({"--rsh", cluster.rsh(), "--batch", "-ex", "mpi ranks", "-ex", "mpi stacks", "-ex", "detach",
                           "attach", std::to_string(job.pid())},
                          cluster.options(run_options().timeout_after(job_timeout)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    auto listed = ranks_listed(r.out);
    REQUIRE(listed.size() == 4);
    for (auto& [rank, row] : listed) {
        INFO("rank " << rank);
        CHECK(row.pid == pid_of[rank]);
        CHECK(row.reached == "gdbserver via " + row.host);
    }
    CHECK(has_line_containing(r.out, "park [rank 1,3]"));
    CHECK(has_line_containing(r.out, "park [rank 2]"));
    CHECK(has_line_containing(r.out, "park_root [rank 0]"));
    for (auto& [rank, pid] : pid_of) {
        std::string host = listed[rank].host;
        auto st = run({cluster.rsh(), host, "grep TracerPid /proc/" + pid + "/status"}, cluster.options());
        INFO("rank " << rank << " on " << host << ": " << st.all());
        CHECK(st.out == "TracerPid:\t0\n");
    }
    CHECK(job.running());
}

TEST_CASE("the remote shell comes from set remote-shell, else --rsh, else OMPDBG_RSH, else ssh, and set mpi-local-hosts "
          "lists more names of this host",
          "[cli][remote]") {
    auto shown = [](const std::vector<std::string>& args, const std::string& env) {
        run_options o = run_options().timeout_after(std::chrono::seconds(30));
        if (!env.empty()) {
            o.set_env("OMPDBG_RSH", env);
        }
        auto r = ompdbg_batch(args, o);
        INFO(r.all());
        CHECK(r.ok());
        return r.out;
    };
    const std::string show = "show remote-shell";
    CHECK(has_line(shown({"-ex", show}, ""),
                   "The remote shell that starts a gdbserver agent on another host is \"ssh -T -o BatchMode=yes\"."));
    CHECK(has_line(shown({"-ex", show}, "rsh -l me"),
                   "The remote shell that starts a gdbserver agent on another host is \"rsh -l me\"."));
    CHECK(has_line(shown({"--rsh", "ssh -T -p 2222", "-ex", show}, "rsh -l me"),
                   "The remote shell that starts a gdbserver agent on another host is \"ssh -T -p 2222\"."));
    CHECK(has_line(shown({"--rsh", "ssh -T -p 2222", "-ex", "set remote-shell /opt/bin/myrsh", "-ex", show}, ""),
                   "The remote shell that starts a gdbserver agent on another host is \"/opt/bin/myrsh\"."));
    CHECK(has_line(shown({"-ex", "set mpi-local-hosts login1, login1-ib", "-ex", "show mpi-local-hosts"}, ""),
                   "More names of this host are \"login1,login1-ib\"."));
}

TEST_CASE("mpi across hosts: a job with ranks on this host and on another reaches the local ones through ptrace and "
          "the others through the agent, a breakpoint hits in every rank and the job runs to its end",
          "[e2e][mpi][remote]") {
    char name[256] = {};
    REQUIRE(::gethostname(name, sizeof name - 1) == 0);
    const std::string here = name;
    simulated_cluster cluster({"node1"});
    hostfile hf({here, "node1"});
    auto r = ompdbg_over(cluster,
                         {"start", "break compute", "continue", "continue", "continue", "continue", "mpi ranks",
                          "delete", "continue"},
                         job_over(cluster, hf, 4));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "[MPI job: 4 ranks of " + mpi::stages() + " acquired]"));
    // Ground truth: each rank's own pid, from its own host's PID namespace; a local rank's
    // pid is a process of this machine running the program.
    auto listed = ranks_listed(r.out);
    auto printed = mpi::pids_printed(r.out);
    REQUIRE(listed.size() == 4);
    REQUIRE(printed.size() == 4);
    std::set<std::string> ways;
    for (auto& [rank, row] : listed) {
        INFO("rank " << rank);
        CHECK(row.pid == std::to_string(printed[rank]));
        if (row.host == here) {
            CHECK(row.reached == "ptrace");
        } else {
            CHECK(row.host == "node1");
            CHECK(row.reached == "gdbserver via node1");
        }
        ways.insert(row.reached);
    }
    CHECK(ways == std::set<std::string>{"ptrace", "gdbserver via node1"});
    std::set<int> hit;
    std::regex hit_re(R"(hit Breakpoint 1, compute \(rank=(\d+)\) at .*mpi_stages\.c:)");
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, hit_re)) {
            hit.insert(std::stoi(m[1]));
        }
    }
    CHECK(hit == std::set<int>{0, 1, 2, 3});
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
}
