// `mpi queues` and `mpi deadlock` end to end on real `mpirun -np 4` jobs, with ompdbg
// attached to one rank at a time by pid (`ompdbg --batch -ex "mpi queues" attach PID`):
// what it shows is compared with the MPI-LOG lines each program prints about its own
// operations. Bad input: Debian's stripped Open MPI and a process with no message-queue DLL.

#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/plugins/msgq_job.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using ompdbg::test::msgq::mpi_example;
using ompdbg::test::msgq::mpi_job;
namespace fs = std::filesystem;

namespace {

std::vector<int> parse_ranks(const std::string& csv) {
    std::vector<int> out;
    std::istringstream in(csv);
    for (std::string s; std::getline(in, s, ',');) {
        out.push_back(std::stoi(s));
    }
    return out;
}

/// "0-3" / "0,2": how ompdbg prints a rank list.
std::string ranges(const std::vector<int>& ranks) {
    std::string out;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
            ++j;
        }
        out += out.empty() ? "" : ",";
        out += j > i ? std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]) : std::to_string(ranks[i]);
        i = j + 1;
    }
    return out;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

run_result ompdbg_on_rank(pid_t pid, const std::vector<std::string>& commands) {
    std::vector<std::string> args;
    for (const auto& c : commands) {
        args.push_back("-ex");
        args.push_back(c);
    }
    args.push_back("attach");
    args.push_back(std::to_string(pid));
    return ompdbg_batch(args, run_options().timeout_after(std::chrono::seconds(120)));
}

}  // namespace

TEST_CASE("mpi queues: communicators and posted receives of each rank as the program logged them", "[e2e][mpi][msgq]") {
    mpi_job job(mpi_example("mpi_comm_split"), 4);
    REQUIRE(job.wait_all("state", "holding"));
    // One rank of each split communicator (the host's unit test reads all four).
    for (int rank : {1, 2}) {
        INFO("rank " << rank);
        auto r = ompdbg_on_rank(job.pid_of(rank), {"mpi queues"});
        INFO(r.all());
        REQUIRE(!r.timed_out);
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "Rank " + std::to_string(rank) + " (pid " + std::to_string(job.pid_of(rank)) + "): "));
        std::map<std::string, std::vector<int>> world_of;
        for (const auto& e : job.entries()) {
            if (std::stoi(e.at("rank")) != rank || !e.count("local_rank")) {
                continue;
            }
            world_of[e.at("comm")] = parse_ranks(e.at("world_ranks"));
            CHECK(contains(r.out, "  Communicator \"" + e.at("comm") + "\": size " + e.at("size") + ", local rank " +
                                      e.at("local_rank") + ", world ranks " + ranges(parse_ranks(e.at("world_ranks")))));
        }
        for (const auto& e : job.of(rank, "op", "irecv")) {
            int peer = std::stoi(e.at("peer"));
            int world = world_of.at(e.at("comm")).at(static_cast<std::size_t>(peer));
            std::string from = peer == world ? "from rank " + std::to_string(peer)
                                             : "from local rank " + std::to_string(peer) + " (world rank " +
                                                   std::to_string(world) + ")";
            CHECK(contains(r.out, from + ", tag " + e.at("tag") + ", count " + e.at("count") + " " + e.at("type") +
                                      ", " + e.at("bytes") + " bytes, buffer " + e.at("buf") + ", pending"));
        }
        CHECK(contains(r.out, "Pending sends: none"));
        // Open MPI's DLL does not implement the unexpected-message queue: ompdbg reads ob1's
        // and says so (what it holds depends on the other ranks' timing: not asserted here).
        CHECK_FALSE(contains(r.out, "not available"));
        CHECK(contains(r.out, "from ompdbg's reader of Open MPI's ob1 PML"));
    }
    // The debugger left every rank as it found it: the job finishes normally.
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("mpi queues RANK: pending rendezvous sends at a barrier, a wrong rank is refused", "[e2e][mpi][msgq]") {
    mpi_job job(mpi_example("mpi_pending_barrier"), 4);
    REQUIRE(job.wait_until([](const auto& e) {
        return (e.count("state") && e.at("state") == "holding") || (e.count("op") && e.at("op") == "barrier");
    }));
    auto isend = job.of(2, "op", "isend");
    REQUIRE(isend.size() == 1);
    auto r = ompdbg_on_rank(job.pid_of(2), {"mpi queues 2", "mpi queues 3", "mpi queues x"});
    INFO(r.all());
    CHECK(contains(r.out, "Pending sends (1):"));
    CHECK(contains(r.out, "#0 to rank " + isend[0].at("peer") + ", tag 23, count " + isend[0].at("count") + " MPI_INT, " +
                              isend[0].at("bytes") + " bytes, buffer " + isend[0].at("buf") + ", pending"));
    CHECK(contains(r.out, "Pending receives (2):"));
    CHECK(contains(r.err, "No rank 3 in this session (ranks 2)."));
    CHECK(contains(r.err, "Invalid rank \"x\": mpi queues [RANK]"));
    CHECK(r.exit_code != 0);
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("mpi deadlock: nothing reported on a healthy rank with pending requests", "[e2e][mpi][msgq]") {
    mpi_job job(mpi_example("mpi_pending_barrier"), 4);
    REQUIRE(job.wait_until([](const auto& e) {
        return (e.count("state") && e.at("state") == "holding") || (e.count("op") && e.at("op") == "barrier");
    }));
    for (int rank : {0, 1}) {
        auto r = ompdbg_on_rank(job.pid_of(rank), {"mpi deadlock"});
        INFO(r.all());
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "No deadlock found."));
        CHECK(!contains(r.out, "Deadlock:"));
        CHECK(!contains(r.out, "Starved:"));
        CHECK(contains(r.out, rank == 0 ? "0 in collectives, 1 running" : "1 in collectives, 0 running"));
    }
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("mpi queues: Debian's stripped Open MPI names the missing types and how to get them", "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_comm_split-debian-ompi");
    if (!fs::exists(prog) || !fs::exists("/usr/bin/mpirun.openmpi")) {
        WARN("skipped: Debian's Open MPI is not installed");
        return;
    }
    mpi_job job(prog, 4, "/usr/bin/mpirun.openmpi");
    REQUIRE(job.wait_all("state", "holding"));
    auto r = ompdbg_on_rank(job.pid_of(0), {"mpi queues", "mpi deadlock"});
    INFO(r.all());
    REQUIRE(!r.timed_out);
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "missing type opal_list_item_t"));
    CHECK(contains(r.err, "scripts/bootstrap"));
    // One line per failing command, nothing from the DLL itself on our stderr.
    CHECK(!contains(r.all(), "WARNING"));
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("mpi queues: a process without a message-queue DLL, and no process at all", "[e2e][mpi][msgq]") {
    // A rank's environment but no MPI library: the DLL lookup finds nothing to load.
    auto r = ompdbg_batch({"-ex", "break main", "-ex", "run", "-ex", "mpi queues", example_path("counter")},
                          run_options().set_env("OMPI_COMM_WORLD_RANK", "0").timeout_after(std::chrono::seconds(60)));
    INFO(r.all());
    CHECK(contains(r.err, "names no MPI message-queue DLL"));
    CHECK(contains(r.err, "not an MPI program"));
    auto none = ompdbg_batch({"-ex", "mpi queues", "-ex", "mpi deadlock"},
                             run_options().timeout_after(std::chrono::seconds(60)));
    CHECK(contains(none.err, "The program is not being run."));
    CHECK(none.exit_code != 0);
}
