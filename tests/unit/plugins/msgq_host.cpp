// The message-queue host against real `mpirun -np 4` jobs: each rank attached by pid with
// libtracer, Open MPI's real libompi_dbg_msgq.so loaded from what the rank names, and every
// communicator and queue entry compared with what the program logged about itself.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "msgq_job.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

namespace fs = std::filesystem;
using namespace ompdbg;
using namespace ompdbg::plugins;
using ompdbg::test::msgq::mpi_example;
using ompdbg::test::msgq::mpi_job;

namespace {

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

const msgq_communicator* comm_named(const std::vector<msgq_communicator>& comms, const std::string& name) {
    for (const auto& c : comms) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

std::vector<int> parse_ranks(const std::string& csv) {
    std::vector<int> out;
    std::istringstream in(csv);
    for (std::string s; std::getline(in, s, ',');) {
        out.push_back(std::stoi(s));
    }
    return out;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ompdbg::error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("msgq: a real Open MPI rank names its DLL, it loads with version and bitness checked", "[plugins][msgq]") {
    mpi_job job(mpi_example("mpi_comm_split"), 4);
    REQUIRE(job.wait_all("state", "holding"));
    auto proc = tracer::process::attach(job.pid_of(0));
    auto cands = find_msgq_dll_candidates(*proc);
    CHECK(cands.has_locations_symbol);
    CHECK(cands.has_dll_name_symbol);
    const std::string expected = std::string(ompdbg::test::cache_dir) + "/openmpi-4.1.4/lib/openmpi/libompi_dbg_msgq.so";
    REQUIRE(!cands.in_order().empty());
    CHECK(fs::equivalent(cands.in_order().front(), expected));
    plugin_policy policy;
    auto lib = msgq_library::load_for(*proc, policy);
    CHECK(fs::equivalent(lib->path(), expected));
    CHECK(lib->compatibility() == 2);
    CHECK(lib->taddr_width() == 8);
    CHECK(lib->version_string().find("Open MPI") != std::string::npos);
    // Loaded once per debugger.
    CHECK(msgq_library::load(expected, policy) == lib);
    proc->detach();
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("msgq: communicators and posted receives of every rank match the program's log", "[plugins][msgq]") {
    mpi_job job(mpi_example("mpi_comm_split"), 4);
    REQUIRE(job.wait_all("state", "holding"));
    plugin_policy policy;
    for (int rank = 0; rank < job.ranks(); ++rank) {
        INFO("rank " << rank);
        auto proc = tracer::process::attach(job.pid_of(rank));
        CHECK(mpi_rank_from_environment(job.pid_of(rank)) == rank);
        auto lib = msgq_library::load_for(*proc, policy);
        auto comms = [&] {
            msgq_process mp(lib, *proc, rank);
            CHECK(mp.global_rank() == rank);
            return mp.communicators();
        }();
        // Every communicator the program logged, with its size, local rank and world ranks.
        int logged_comms = 0;
        for (const auto& e : job.entries()) {
            if (std::stoi(e.at("rank")) != rank || !e.count("local_rank")) {
                continue;
            }
            ++logged_comms;
            INFO("communicator " << e.at("comm"));
            const auto* c = comm_named(comms, e.at("comm"));
            REQUIRE(c != nullptr);
            CHECK(c->size == std::stoi(e.at("size")));
            CHECK(c->local_rank == std::stoi(e.at("local_rank")));
            CHECK(c->world_ranks == parse_ranks(e.at("world_ranks")));
        }
        CHECK(logged_comms == 3);
        // Every posted MPI_Irecv is a pending receive on its communicator.
        auto posted = job.of(rank, "op", "irecv");
        CHECK(posted.size() == (rank == 0 ? 1u : 2u));
        for (const auto& e : posted) {
            INFO("irecv tag " << e.at("tag") << " on " << e.at("comm"));
            const auto* c = comm_named(comms, e.at("comm"));
            REQUIRE(c != nullptr);
            REQUIRE(c->receives.available);
            bool found = false;
            for (const auto& op : c->receives.operations) {
                if (op.desired_tag != std::stoi(e.at("tag"))) {
                    continue;
                }
                found = true;
                CHECK(op.status == msgq_status::pending);
                CHECK(op.desired_local_rank == std::stoi(e.at("peer")));
                CHECK(op.desired_global_rank == c->world_ranks.at(static_cast<std::size_t>(op.desired_local_rank)));
                CHECK(!op.tag_wild);
                CHECK(op.desired_length == std::stoi(e.at("bytes")));
                CHECK(hex(op.buffer) == e.at("buf"));
                REQUIRE(op.count);
                CHECK(*op.count == std::stoull(e.at("count")));
                CHECK(op.datatype == e.at("type"));
            }
            CHECK(found);
        }
        // Nothing else is pending in this program.
        std::size_t receives = 0, sends = 0;
        for (const auto& c : comms) {
            receives += c.receives.operations.size();
            sends += c.sends.operations.size();
            // Open MPI's DLL does not implement the unexpected-message queue: ob1's is read
            // by ompdbg. No message of the program is unexpected here (Open MPI's own, with
            // negative tags, may be, depending on the other ranks' timing).
            CHECK(c.unexpected.available);
            CHECK(c.unexpected.reader == msgq_ob1_reader_name);
            for (const auto& op : c.unexpected.operations) {
                CHECK(op.desired_tag < 0);
            }
        }
        CHECK(receives == posted.size());
        CHECK(sends == 0);
        proc->detach();
    }
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("msgq: pending rendezvous sends and receives of a healthy program at a barrier", "[plugins][msgq]") {
    mpi_job job(mpi_example("mpi_pending_barrier"), 4);
    // Rank 0 holds before the barrier, the others log op=barrier once their requests are posted.
    REQUIRE(job.wait_until([](const auto& e) {
        return (e.count("state") && e.at("state") == "holding") || (e.count("op") && e.at("op") == "barrier");
    }));
    plugin_policy policy;
    for (int rank = 0; rank < job.ranks(); ++rank) {
        INFO("rank " << rank);
        auto proc = tracer::process::attach(job.pid_of(rank));
        auto lib = msgq_library::load_for(*proc, policy);
        msgq_process mp(lib, *proc, rank);
        auto comms = mp.communicators();
        const auto* world = comm_named(comms, "MPI_COMM_WORLD");
        REQUIRE(world != nullptr);
        auto isend = job.of(rank, "op", "isend");
        REQUIRE(isend.size() == 1);
        REQUIRE(world->sends.operations.size() == 1);
        const auto& s = world->sends.operations[0];
        CHECK(s.desired_tag == 23);
        CHECK(s.desired_global_rank == std::stoi(isend[0].at("peer")));
        CHECK(s.desired_length == std::stoll(isend[0].at("bytes")));
        CHECK(hex(s.buffer) == isend[0].at("buf"));
        CHECK(s.status == msgq_status::pending);
        std::map<std::int64_t, const msgq_operation*> by_tag;
        for (const auto& op : world->receives.operations) {
            by_tag[op.desired_tag] = &op;
        }
        for (const auto& e : job.of(rank, "op", "irecv")) {
            auto it = by_tag.find(std::stoi(e.at("tag")));
            REQUIRE(it != by_tag.end());
            CHECK(it->second->desired_global_rank == std::stoi(e.at("peer")));
            CHECK(hex(it->second->buffer) == e.at("buf"));
        }
        CHECK(world->receives.operations.size() == 2);
        proc->detach();
    }
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}

TEST_CASE("msgq: a process that is not an MPI program names no DLL", "[plugins][msgq]") {
    auto proc = tracer::process::launch(ompdbg::test::example_path("counter"), {}, {});
    auto cands = find_msgq_dll_candidates(*proc);
    CHECK(!cands.has_locations_symbol);
    CHECK(!cands.has_dll_name_symbol);
    plugin_policy policy;
    auto msg = error_of([&] { msgq_library::load_for(*proc, policy); });
    CHECK(msg.find("names no MPI message-queue DLL") != std::string::npos);
    CHECK(msg.find("not an MPI program") != std::string::npos);
}

TEST_CASE("msgq: a file that is not a message-queue DLL is refused by name", "[plugins][msgq]") {
    plugin_policy policy;
    // libmpi itself is a loadable library without the mqs_* entry points.
    const std::string libmpi = std::string(ompdbg::test::cache_dir) + "/openmpi-4.1.4/lib/libmpi.so";
    auto msg = error_of([&] { msgq_library::load(libmpi, policy); });
    CHECK(msg.find("not a message-queue DLL") != std::string::npos);
    CHECK(msg.find("mqs_setup_basic_callbacks") != std::string::npos);
    auto missing = error_of([&] { msgq_library::load("/nonexistent/libompi_dbg_msgq.so", policy); });
    CHECK(missing.find("/nonexistent/libompi_dbg_msgq.so") != std::string::npos);
}

TEST_CASE("msgq: Debian's stripped Open MPI: the missing types are named with how to get them", "[plugins][msgq]") {
    const std::string prog = mpi_example("mpi_comm_split-debian-ompi");
    if (!fs::exists(prog) || !fs::exists("/usr/bin/mpirun.openmpi")) {
        WARN("Debian's Open MPI is not installed");
        return;
    }
    mpi_job job(prog, 4, "/usr/bin/mpirun.openmpi");
    REQUIRE(job.wait_all("state", "holding"));
    auto proc = tracer::process::attach(job.pid_of(1));
    plugin_policy policy;
    auto lib = msgq_library::load_for(*proc, policy);
    CHECK(lib->path().string().find("/usr/lib/") == 0);
    auto msg = error_of([&] { msgq_process mp(lib, *proc, 1); });
    CHECK(msg.find("missing type opal_list_item_t") != std::string::npos);
    CHECK(msg.find("scripts/bootstrap") != std::string::npos);
    CHECK(msg.find("libmpi.so") != std::string::npos);
    proc->detach();
    job.release();
    auto done = job.wait_exit();
    REQUIRE(done);
    CHECK(done->ok());
}
