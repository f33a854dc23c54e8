// Whole-job message queues and deadlock analysis (issue 6) on real `ompdbg run -- mpirun
// -np 4` sessions: `mpi queues` and `mpi deadlock` gather from every rank of the focus. Every
// rank is brought to a place its program guarantees before asking (a breakpoint on the line
// of its blocking call, then, one rank at a time, Open MPI's progress loop inside that call,
// which runs only once the request is posted); the ground truth is the MPI-LOG lines each
// program prints about its own operations.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../unit/plugins/msgq_job.hpp"
#include "cli_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using ompdbg::test::msgq::log_entry;
using ompdbg::test::msgq::mpi_example;
using ompdbg::test::msgq::parse_log_line;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// An ompdbg session on an MPI job, and the MPI-LOG lines its ranks wrote.
struct mpi_run : run_result {
    /// The ranks' MPI-LOG lines as they wrote them to the file MPI_EXAMPLE_LOG names: the
    /// lines mpirun forwards to stdout can be lost when the session ends the job while
    /// mpirun is stopped (all-stop stops the starter too) with lines still in its pipes.
    std::string log;
};

/// `ompdbg --batch -ex CMD... run MPIRUN -np RANKS PROGRAM`.
mpi_run ompdbg_mpi(const std::string& program, const std::vector<std::string>& cmds,
                   const std::string& mpirun = ompdbg::test::msgq::mpirun_path(),
                   const std::vector<std::string>& extra_args = {}, int ranks = 4) {
    REQUIRE(fs::exists(mpirun));   // scripts/bootstrap builds it
    REQUIRE(fs::exists(program));
    auto args = ex_args(cmds);
    std::vector<std::string> job{"run", mpirun, "--allow-run-as-root", "--oversubscribe", "--mca",
                                 "mpi_yield_when_idle", "1", "-np", std::to_string(ranks), program};
    job.insert(job.end(), extra_args.begin(), extra_args.end());
    args.insert(args.end(), job.begin(), job.end());
    const fs::path log_file = fs::temp_directory_path() / ("ompdbg-mpi-log-" + std::to_string(::getpid()) + ".txt");
    fs::remove(log_file);
    // Four ranks attached and indexed on a loaded 2-core machine: minutes, never a hang.
    mpi_run r;
    static_cast<run_result&>(r) = ompdbg_batch(
        args, run_options().set_env("MPI_EXAMPLE_LOG", log_file.string()).timeout_after(std::chrono::seconds(280)));
    std::ifstream in(log_file);
    std::stringstream text;
    text << in.rdbuf();
    r.log = text.str();
    fs::remove(log_file);
    return r;
}

/// The MPI-LOG lines the ranks wrote (mpi_run::log).
std::vector<log_entry> logged(const std::string& log) {
    std::vector<log_entry> v;
    for (const auto& l : lines_of(log)) {
        if (auto e = parse_log_line(l)) {
            v.push_back(*e);
        }
    }
    return v;
}

std::vector<log_entry> ops_of(const std::vector<log_entry>& log, int rank, const std::string& op) {
    std::vector<log_entry> v;
    for (const auto& e : log) {
        if (e.count("rank") && std::stoi(e.at("rank")) == rank && e.count("op") && e.at("op") == op) {
            v.push_back(e);
        }
    }
    return v;
}

/// The `mpi queues` section of each rank: from its "Rank N (pid P): ..." line to the next.
std::map<int, std::string> queue_sections(const std::string& out) {
    std::map<int, std::string> m;
    std::regex head(R"(^Rank (\d+) \(pid \d+\): )");
    int current = -1;
    for (const auto& l : lines_of(out)) {
        std::smatch mm;
        if (std::regex_search(l, mm, head)) {
            current = std::stoi(mm[1]);
        } else if (current >= 0 && !(l.rfind("  ", 0) == 0)) {
            current = -1;
        }
        if (current >= 0) {
            m[current] += l + "\n";
        }
    }
    return m;
}

/// Commands that bring each rank in turn from wherever it stopped into Open MPI's progress
/// loop (its blocking call has posted its request by then): only that rank runs.
std::vector<std::string> into_progress_loop(const std::vector<int>& ranks) {
    std::vector<std::string> cmds;
    for (int r : ranks) {
        cmds.push_back("rank " + std::to_string(r));
        cmds.push_back("continue");
    }
    cmds.push_back("rank all");
    return cmds;
}

}  // namespace

TEST_CASE("mpi deadlock over the whole job: the ring's cycle is found across ranks", "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_ring_deadlock");
    const std::string dot = "/tmp/ompdbg-ring-" + std::to_string(::getpid()) + ".dot";
    // Every rank stops on the line of its MPI_Recv (4 hits: run + 3 continues), then each
    // rank alone runs into opal_progress, which MPI_Recv calls only once the receive is posted.
    std::vector<std::string> cmds{"break " + example_location("mpi/mpi_ring_deadlock.c", "ring_recv"), "run",
                                  "continue", "continue", "continue", "delete", "break opal_progress"};
    auto more = into_progress_loop({0, 1, 2, 3});
    cmds.insert(cmds.end(), more.begin(), more.end());
    cmds.insert(cmds.end(), {"delete", "mpi deadlock --dot " + dot, "mpi queues"});
    auto r = ompdbg_mpi(prog, cmds);
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    auto log = logged(r.log);
    // The cycle the program built: rank r receives from the rank it logged as its peer.
    std::map<int, int> waits_for;
    for (int rank = 0; rank < 4; ++rank) {
        auto recv = ops_of(log, rank, "recv");
        REQUIRE(recv.size() == 1);
        CHECK(recv[0].at("tag") == "7");
        waits_for[rank] = std::stoi(recv[0].at("peer"));
    }
    std::string cycle = "0";
    for (int at = waits_for.at(0); at != 0; at = waits_for.at(at)) {
        cycle += " -> " + std::to_string(at);
    }
    cycle += " -> 0";
    CHECK(has_line(r.out, "Wait-for graph of 4 ranks: 4 blocked in point-to-point calls, 0 in collectives, "
                          "0 running, 0 finished."));
    CHECK(has_line(r.out, "Deadlock: " + cycle + ", each blocked in MPI_Recv(tag 7)"));
    CHECK_FALSE(contains(r.out, "Starved:"));
    CHECK_FALSE(contains(r.out, "No deadlock found."));
    // The graph file has the cycle's edges in red.
    std::ifstream in(dot);
    std::stringstream text;
    text << in.rdbuf();
    for (auto [from, to] : waits_for) {
        CHECK(contains(text.str(), "r" + std::to_string(from) + " -> r" + std::to_string(to) +
                                       " [label=\"MPI_Recv(tag 7)\", color=red]"));
    }
    fs::remove(dot);
    // `mpi queues` of the whole job: each rank's posted receive, as the rank logged it.
    auto sections = queue_sections(r.out);
    REQUIRE(sections.size() == 4);
    for (int rank = 0; rank < 4; ++rank) {
        INFO("rank " << rank);
        auto recv = ops_of(log, rank, "recv").at(0);
        CHECK(contains(sections[rank], "Pending receives (1):"));
        CHECK(contains(sections[rank], "#0 from rank " + recv.at("peer") + ", tag 7, count " + recv.at("count") +
                                           " " + recv.at("type") + ", " + recv.at("bytes") + " bytes, buffer " +
                                           recv.at("buf") + ", pending"));
        CHECK(contains(sections[rank], "Pending sends: none"));
    }
}

TEST_CASE("mpi deadlock on a stopped MPI_Sendrecv ring: sends the peer can take are no waits, one snapshot said",
          "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_sendrecv_ring");
    // A healthy halo exchange of rendezvous blocks (256 KiB): every rank stops on the line of
    // its first MPI_Sendrecv (4 hits), then each alone runs into Open MPI's progress loop,
    // which the call enters once its receive is posted and its send started. Whatever the
    // ranks got to, a stopped healthy job is a consistent cut that has no wait-for cycle.
    std::vector<std::string> cmds{"break " + example_location("mpi/mpi_sendrecv_ring.c", "ring_sendrecv_right"), "run",
                                  "continue", "continue", "continue", "delete", "break opal_progress"};
    auto more = into_progress_loop({0, 1, 2, 3});
    cmds.insert(cmds.end(), more.begin(), more.end());
    cmds.insert(cmds.end(), {"delete", "mpi deadlock", "mpi queues"});
    auto r = ompdbg_mpi(prog, cmds, ompdbg::test::msgq::mpirun_path(), {"65536"});
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    auto log = logged(r.log);
    CHECK_FALSE(contains(r.out, "Deadlock:"));
    CHECK(has_line(r.out, "Evidence: one snapshot of the stopped ranks (a cycle in it may be a momentary wait; "
                          "`ompdbg triage PID --samples N` compares several while the job runs)."));
    // The pending halves of the exchange that can complete, each with the peer the rank
    // logged for its first exchange (tag 1: to the right, from the left).
    std::regex not_wait(R"(^Not a wait: rank (\d+) in MPI_Sendrecv\((send|receive) tag (\d+)\) with rank (\d+): (.*)$)");
    int cleared = 0;
    for (const auto& l : lines_of(r.out)) {
        std::smatch m;
        if (!std::regex_match(l, m, not_wait)) {
            continue;
        }
        ++cleared;
        int rank = std::stoi(m[1]);
        auto first = ops_of(log, rank, m[2] == "send" ? "sendrecv-send" : "sendrecv-recv");
        REQUIRE(first.size() == 1);
        if (m[3] == "1") {
            CHECK(m[4] == first[0].at("peer"));
        }
        // Each of wait_edges' reasons (a rendezvous whose data the peer took already is the
        // last: its sender has not seen the end of the transfer yet).
        CHECK((contains(m[5], "posted receive matches it") || contains(m[5], "has started the message") ||
               contains(m[5], "than have arrived") || contains(m[5], "unexpected queue") ||
               contains(m[5], "has received it (ob1's sequence numbers")));
    }
    CHECK(cleared > 0);
}

TEST_CASE("mpi deadlock over the whole job: the tag-mismatch rank is reported as starved", "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_tag_mismatch");
    // Rank 1 stops on the line of its MPI_Recv(tag 8), the others on MPI_Barrier (4 hits);
    // then rank 1 alone runs into opal_progress inside MPI_Recv. The breakpoint set while the
    // focus is rank 1 is planted in rank 1 only.
    std::vector<std::string> cmds{"break " + example_location("mpi/mpi_tag_mismatch.c", "mismatch_recv"),
                                  "break MPI_Barrier", "run", "continue", "continue", "continue",
                                  "rank 1", "delete", "break opal_progress", "info breakpoints", "continue",
                                  "rank all", "delete", "mpi deadlock", "mpi queues 1"};
    auto r = ompdbg_mpi(prog, cmds);
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    auto log = logged(r.log);
    auto send = ops_of(log, 0, "send");
    auto recv = ops_of(log, 1, "recv");
    REQUIRE(send.size() == 1);
    REQUIRE(recv.size() == 1);
    REQUIRE(send[0].at("tag") != recv[0].at("tag"));   // the program's bug
    CHECK(has_line(r.out, "\tstop only in rank 1"));
    CHECK(has_line(r.out, "Wait-for graph of 4 ranks: 1 blocked in point-to-point calls, 3 in collectives, "
                          "0 running, 0 finished."));
    // The message that does not match, read from rank 1's unexpected queue, is named too.
    CHECK(has_line(r.out, "Starved: rank 1 waits in MPI_Recv(tag " + recv[0].at("tag") + ") for rank " +
                              recv[0].at("peer") + ", which is in MPI_Barrier; unmatched in its unexpected queue: "
                              "rank 0's message with tag " + send[0].at("tag") + " (" + send[0].at("bytes") +
                              " bytes)"));
    CHECK_FALSE(contains(r.out, "Deadlock:"));
    // Rank 1's queue holds the receive it logged; its unexpected queue (rank 1 probed until
    // rank 0's message arrived), which Open MPI's DLL does not report, is read by ompdbg.
    auto sections = queue_sections(r.out);
    REQUIRE(sections.size() == 1);
    CHECK(contains(sections[1], "#0 from rank 0, tag " + recv[0].at("tag") + ", count 2 MPI_INT, 8 bytes, buffer " +
                                    recv[0].at("buf") + ", pending"));
    CHECK_FALSE(contains(sections[1], "not available"));
    // (Messages of the other ranks' MPI_Barrier, with Open MPI's negative tags, may follow.)
    CHECK(contains(sections[1], " from ompdbg's reader of Open MPI's ob1 PML):"));
    CHECK(contains(sections[1], "      #0 from rank 0, tag " + send[0].at("tag") + ", " + send[0].at("bytes") +
                                    " bytes, data at 0x"));
}

TEST_CASE("mpi deadlock over the whole job: nothing reported on a healthy program with pending requests",
          "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_pending_barrier");
    // Ranks 1-3 stop on the barrier line, rank 0 where it holds before it until SIGUSR1 (4 hits
    // in any order: run + 3 continues). Only then has every rank posted its non-blocking
    // requests: stopping at the third barrier hit could catch rank 0 still in MPI_Init.
    auto r = ompdbg_mpi(prog, {"break " + example_location("mpi/mpi_pending_barrier.c", "pending_barrier"),
                               "break hold_until_sigusr1", "run", "continue", "continue", "continue", "mpi deadlock",
                               "mpi queues"});
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "No deadlock found."));
    CHECK_FALSE(contains(r.out, "Deadlock:"));
    CHECK_FALSE(contains(r.out, "Starved:"));
    CHECK_FALSE(contains(r.out, "Waiting on a finished rank:"));
    CHECK(contains(r.out, "Wait-for graph of 4 ranks: 0 blocked in point-to-point calls"));
    auto log = logged(r.log);
    auto sections = queue_sections(r.out);
    REQUIRE(sections.size() == 4);
    for (int rank = 0; rank < 4; ++rank) {
        INFO("rank " << rank);
        for (const auto& e : ops_of(log, rank, "irecv")) {
            CHECK(contains(sections[rank], "from rank " + e.at("peer") + ", tag " + e.at("tag") + ", count " +
                                               e.at("count") + " " + e.at("type") + ", " + e.at("bytes") +
                                               " bytes, buffer " + e.at("buf") + ", pending"));
        }
        auto isend = ops_of(log, rank, "isend");
        REQUIRE(isend.size() == 1);
        CHECK(contains(sections[rank], "to rank " + isend[0].at("peer") + ", tag 23, count " + isend[0].at("count") +
                                           " MPI_INT, " + isend[0].at("bytes") + " bytes, buffer " +
                                           isend[0].at("buf") + ", pending"));
    }
}

TEST_CASE("mpi queues over the whole job: piled-up unexpected messages are read from ob1 when the DLL cannot",
          "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_unexpected");
    // `start` holds the job in MPI_Init; a breakpoint set with the focus on rank 0 stops rank 0
    // only, once every message has arrived (the program probes until then).
    auto r = ompdbg_mpi(prog, {"start", "rank 0", "break hold_until_sigusr1", "rank all", "info breakpoints",
                               "continue", "mpi queues", "mpi deadlock"});
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tstop only in rank 0"));
    auto log = logged(r.log);
    bool arrived = false;
    for (const auto& e : log) {
        arrived = arrived || (e.count("state") && e.at("state") == "all-arrived" && e.at("rank") == "0");
    }
    CHECK(arrived);
    auto sections = queue_sections(r.out);
    REQUIRE(sections.size() == 4);
    // Nine messages wait in rank 0's unexpected queue. Open MPI 4.1's DLL answers
    // mqs_no_information for that queue: ompdbg reads ob1's lists itself and says so.
    CHECK(contains(sections[0], "Pending receives: none"));
    CHECK(contains(sections[0], "    Unexpected messages (9, from ompdbg's reader of Open MPI's ob1 PML):"));
    CHECK_FALSE(contains(sections[0], "not available"));
    // Each message as its sender logged it (arrival order per sender, senders in rank order).
    int index = 0;
    for (int rank = 1; rank < 4; ++rank) {
        auto sends = ops_of(log, rank, "send");
        CHECK(sends.size() == 3);
        for (const auto& e : sends) {
            CHECK(contains(sections[0], "      #" + std::to_string(index++) + " from rank " + std::to_string(rank) +
                                            ", tag " + e.at("tag") + ", " + e.at("bytes") + " bytes, data at 0x"));
        }
        // Every sender is listed with its communicators (each may still be finishing its
        // last eager MPI_Send when rank 0 stops, so its own queues are not asserted).
        CHECK(contains(sections[rank], "  Communicator \"MPI_COMM_WORLD\": size 4, local rank " +
                                           std::to_string(rank) + ", world ranks 0-3"));
    }
    CHECK(has_line(r.out, "No deadlock found."));
}

TEST_CASE("mpi queues: unexpected messages with tags 0 and 42, per communicator, as the sender sent them",
          "[e2e][mpi][msgq]") {
    const std::string prog = mpi_example("mpi_unexpected_tags");
    // Two ranks: rank 0 stops in all_arrived() (after MPI_Barrier, once rank 1's last message
    // arrived) before it posts any receive; then the job runs to its end, rank 0 receiving
    // every message, so the log also has what it received.
    auto r = ompdbg_mpi(prog, {"break all_arrived", "run", "mpi queues 0", "delete", "continue"},
                        ompdbg::test::msgq::mpirun_path(), {}, 2);
    INFO(r.all() + r.log);
    REQUIRE_FALSE(r.timed_out);
    auto log = logged(r.log);
    // What rank 1 sent, per communicator, in order.
    std::map<std::string, std::vector<log_entry>> sent;
    for (const auto& e : log) {
        if (e.at("rank") == "1" && (e.count("op") && (e.at("op") == "send" || e.at("op") == "isend"))) {
            sent[e.at("comm")].push_back(e);
        }
    }
    REQUIRE(sent["MPI_COMM_WORLD"].size() == 7);
    REQUIRE(sent["side"].size() == 1);
    // Rank 0 received them all afterwards: the job ran to its end.
    std::size_t received = 0;
    for (const auto& e : log) {
        received += e.at("rank") == "0" && e.count("op") && e.at("op") == "received";
    }
    CHECK(received == 8);
    auto sections = queue_sections(r.out);
    REQUIRE(sections.count(0));
    const std::string& q = sections[0];
    for (const auto& [comm, msgs] : sent) {
        INFO("communicator " << comm);
        auto at = q.find("  Communicator \"" + comm + "\"");
        REQUIRE(at != std::string::npos);
        auto section = q.substr(at, q.find("  Communicator", at + 2) - at);
        CHECK(contains(section, "    Pending receives: none"));
        CHECK(contains(section, "    Unexpected messages (" + std::to_string(msgs.size()) +
                                    ", from ompdbg's reader of Open MPI's ob1 PML):"));
        for (std::size_t i = 0; i < msgs.size(); ++i) {
            const auto& e = msgs[i];
            std::string line = "      #" + std::to_string(i) + " from rank 1, tag " + e.at("tag") + ", " +
                               e.at("bytes") + " bytes, ";
            // Eager messages are held in ob1's buffers; the large one is a rendezvous.
            line += std::stoi(e.at("bytes")) > 4096 ? "data still at the sender" : "data at 0x";
            CHECK(contains(section, line));
        }
    }
    bool starter_exited = false;
    for (const auto& l : lines_of(r.out)) {
        starter_exited = starter_exited || std::regex_match(l, std::regex(R"(^\[\S+ exited with code 00\]$)"));
    }
    CHECK(starter_exited);
}

TEST_CASE("mpi queues: the message-queue DLL obeys the session's plugin policy (set plugin-path, --plugin-path)",
          "[e2e][mpi][msgq]") {
    const std::string real_dll = std::string(cache_dir) + "/openmpi-4.1.4/lib/openmpi/libompi_dbg_msgq.so";
    REQUIRE(fs::exists(real_dll));
    // A copy of Open MPI's DLL in a directory others may write to: not a trusted place.
    char tmpl[] = "/tmp/ompdbg-msgq-policy-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const fs::path dir = tmpl;
    struct cleanup {
        fs::path d;
        ~cleanup() {
            std::error_code ec;
            fs::remove_all(d, ec);
        }
    } guard{dir};
    fs::permissions(dir, fs::perms::all);
    const fs::path dll = dir / "libompi_dbg_msgq.so";
    fs::copy_file(real_dll, dll);
    // The program names that copy through MPIR_dll_name; it plays a rank by its environment.
    const std::string prog = std::string(examples_dir) + "/mpi/msgq_names_dll";
    auto opts = run_options().set_env("OMPI_COMM_WORLD_RANK", "0").timeout_after(std::chrono::seconds(120));
    auto r = ompdbg_batch({"-ex", "break dll_named", "-ex", "run", "-ex", "mpi queues", "-ex",
                           "set plugin-path " + dir.string(), "-ex", "mpi queues", "--args", prog, dll.string()},
                          opts);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    // First: refused, with the command that allows it.
    const std::string refusal = "refusing to load plugin " + fs::canonical(dll).string() + ": its directory " +
                                fs::canonical(dir).string() + " is writable by others; allow it with 'set plugin-path " +
                                fs::canonical(dir).string() + "'";
    CHECK(contains(r.err, refusal));
    // Then allowed: the DLL loads (version and bitness accepted) and gets as far as asking
    // for Open MPI's types, which this program does not have.
    auto after = r.err.substr(r.err.find(refusal) + refusal.size());
    CHECK_FALSE(contains(after, "refusing to load plugin"));
    CHECK(contains(after, "missing type opal_list_item_t"));
    // --plugin-path on the command line is the same policy.
    auto c = ompdbg_batch({"--plugin-path", dir.string(), "-ex", "break dll_named", "-ex", "run", "-ex", "mpi queues",
                           "--args", prog, dll.string()},
                          opts);
    INFO(c.all());
    REQUIRE_FALSE(c.timed_out);
    CHECK_FALSE(contains(c.err, "refusing to load plugin"));
    CHECK(contains(c.err, "missing type opal_list_item_t"));
}
