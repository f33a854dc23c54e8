// `ompdbg triage` on real programs: an OpenMP team hung in a barrier (7 of 8 threads; the
// program prints its own ground truth once they sleep there), a real `mpirun -np 4` ring
// deadlock, a healthy computing program sampled several times, a core file, the JSON
// document, and bad input. After every triage the target runs on: a hung program is still
// there and untraced, a computing one keeps printing its correct sequence.
#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
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

/// The OpenMP example hung in its barrier, with its ground truth.
struct hung_team {
    background_process prog;
    int team = 0, odd = 0;
    pid_t odd_tid = 0;
    bool ready = false;
    /// `spin`: the barrier busy-waits (KMP_BLOCKTIME=infinite) instead of sleeping.
    explicit hung_team(const std::string& program = "omp_hang_barrier", bool spin = false)
        : prog({omp_example(program)}, spin ? run_options()
                                                  .set_env("OMP_DEBUG", "enabled")
                                                  .set_env("HANG_SPIN", "1")
                                                  .set_env("KMP_BLOCKTIME", "infinite")
                                            : run_options().set_env("OMP_DEBUG", "enabled")) {
        auto l = prog.wait_for_line(std::regex(R"(truth: held team_size=(\d+) odd_thread=(\d+) odd_tid=(\d+))"), 60s);
        if (!l) {
            return;
        }
        std::smatch m;
        std::regex_search(*l, m, std::regex(R"(team_size=(\d+) odd_thread=(\d+) odd_tid=(\d+))"));
        team = std::stoi(m[1]);
        odd = std::stoi(m[2]);
        odd_tid = std::stoi(m[3]);
        ready = true;
    }
};

/// Two samples of the hung team: nothing moves, so the verdict is a hang (exit status 4).
run_result triage_hung(hung_team& h) {
    REQUIRE(h.ready);
    REQUIRE(h.team == 8);
    auto r = triage({std::to_string(h.prog.pid()), "--samples", "2", "--interval", "0.2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.out, Catch::Contains("Verdict: hang: no thread moved in 2 samples"));
    return r;
}

/// The triage section of docs/json.md (its table documents every key of the document).
std::string documented_triage_schema() {
    std::ifstream in(std::string(examples_source_dir) + "/../docs/json.md");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto from = text.find("## `ompdbg triage --json`");
    if (from == std::string::npos) {
        return "";
    }
    return text.substr(from, text.find("\n## ", from + 1) - from);
}

/// Every key of `obj` is documented in the schema section as `key`, `prefix.key` or
/// `prefix[].key`... (the table's first column), or appears in the row of its parent.
void check_documented(const nlohmann::json& obj, const std::string& schema) {
    for (auto& [key, value] : obj.items()) {
        INFO("key " << key);
        CHECK((schema.find("`" + key + "`") != std::string::npos || schema.find(key + ",") != std::string::npos ||
               schema.find(key + "?") != std::string::npos || schema.find(key + " (") != std::string::npos ||
               schema.find(key + "}") != std::string::npos || schema.find(key + ":") != std::string::npos));
    }
}

std::string barrier_at() { return example_location("openmp/omp_hang_barrier.c", "barrier"); }
std::string odd_read_at() { return example_location("openmp/omp_hang_barrier.c", "odd-read"); }

/// step_value(n) of omp_progress.c, computed here.
long progress_value(long n) {
    long total = 0;
    for (long i = 0; i < 32000000L; ++i) {
        total += (i * n) % 7;
    }
    return total;
}

}  // namespace

TEST_CASE("triage: an OpenMP team hung in a barrier, 7 of 8 threads labelled with state and region",
          "[e2e][triage][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    hung_team h;
    auto r = triage_hung(h);
    INFO(r.all());
    // The tree: the initial thread (main's stack) and 6 workers at the barrier's line, the
    // odd worker at its read(), each group labelled with its OpenMP state and region.
    CHECK_FALSE(line_with(r.out, {"at " + barrier_at(), "[6 threads]"}).empty());
    CHECK_FALSE(line_with(r.out, {"at " + barrier_at(), "[1 thread]"}).empty());
    CHECK_FALSE(line_with(r.out, {"at " + odd_read_at(), "[1 thread]"}).empty());
    std::string label = line_with(r.out, {"=> 6 threads", "wait_barrier"});
    CHECK_FALSE(label.empty());
    CHECK_THAT(label, Catch::Contains("(level 1, team 8)"));
    CHECK_THAT(label, Catch::Contains("region main.omp_outlined at omp_hang_barrier.c:"));
    CHECK_FALSE(line_with(r.out, {"=> 1 thread (1): ", "wait_barrier", "team 8)"}).empty());
    // The finding names the barrier and the odd thread.
    std::string finding = line_with(r.out, {"7 of 8 OpenMP threads wait in a barrier"});
    CHECK_FALSE(finding.empty());
    CHECK_THAT(finding, Catch::Contains("OpenMP thread " + std::to_string(h.odd) + " is "));
    CHECK_THAT(finding, Catch::Contains(odd_read_at()));
    CHECK_THAT(r.out, Catch::Contains("labels from OMPD"));
    // The target runs on, untraced.
    CHECK(h.prog.running());
    CHECK(tracer_of(h.prog.pid()) == 0);
}

TEST_CASE("triage: --json is one document with the labelled threads, tree and verdict", "[e2e][triage][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    hung_team h;
    REQUIRE(h.ready);
    fs::path dot = fs::temp_directory_path() / ("ompdbg-triage-" + std::to_string(::getpid()) + ".dot");
    auto r = triage({"--json", std::to_string(h.prog.pid()), "--samples", "2", "--interval", "0.1", "--dot",
                     dot.string()});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 4);
    auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 1);   // one document
    auto doc = nlohmann::json::parse(lines.front());
    CHECK(doc["type"] == "triage");
    // Every key is one docs/json.md documents, at the top, in a process and in a thread.
    std::string schema = documented_triage_schema();
    REQUIRE_FALSE(schema.empty());
    check_documented(doc, schema);
    check_documented(doc["processes"][0], schema);
    check_documented(doc["processes"][0]["threads"][0], schema);
    check_documented(doc["processes"][0]["tree"], schema);
    check_documented(doc["verdict"], schema);
    check_documented(doc["movement"], schema);
    for (const char* key : {"type", "format", "target", "samples", "interval", "processes", "movement", "findings",
                            "text", "verdict", "exit_status"}) {
        CHECK(doc.contains(key));
    }
    CHECK(doc["target"]["kind"] == "process");
    CHECK(doc["target"]["pid"] == h.prog.pid());
    CHECK(doc["samples"] == 2);
    CHECK(doc["verdict"]["kind"] == "hang");
    CHECK(doc["verdict"]["exit_status"] == 4);
    CHECK(doc["exit_status"] == 4);
    REQUIRE(doc["processes"].size() == 1);
    const auto& p = doc["processes"][0];
    CHECK(p["pid"] == h.prog.pid());
    CHECK(p["openmp"]["source"] == "OMPD");
    // Ground truth from /proc: every thread of the process, by tid.
    std::set<pid_t> tids;
    for (auto& e : fs::directory_iterator("/proc/" + std::to_string(h.prog.pid()) + "/task")) {
        tids.insert(std::stoi(e.path().filename().string()));
    }
    std::set<pid_t> seen;
    int in_barrier = 0, openmp = 0;
    for (const auto& t : p["threads"]) {
        seen.insert(t["tid"].get<pid_t>());
        CHECK(t["moved"] == false);
        if (!t["openmp"].get<bool>()) {
            continue;
        }
        ++openmp;
        CHECK(t["team_size"] == 8);
        CHECK(t["level"] == 1);
        std::string state = t["state"];
        if (t["tid"] == h.odd_tid) {
            CHECK(t["thread_num"] == h.odd);
            CHECK(state.find("wait_barrier") == std::string::npos);
            CHECK_THAT(t["where"].get<std::string>(), Catch::Contains(odd_read_at()));
        } else {
            in_barrier += state.find("wait_barrier") != std::string::npos;
            CHECK_THAT(t["where"].get<std::string>(), Catch::Contains(barrier_at()));
        }
    }
    CHECK(seen == tids);
    CHECK(openmp == 8);
    CHECK(in_barrier == 7);
    CHECK(doc["tree"].is_null());
    CHECK(p["tree"]["threads"] == tids.size());
    CHECK(doc["movement"]["moved_threads"].empty());
    // --dot wrote the merged tree as a Graphviz graph.
    std::ifstream in(dot);
    std::string dot_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(dot_text, Catch::StartsWith("digraph triage_stacks {"));
    CHECK_THAT(dot_text, Catch::Contains(barrier_at()));
    fs::remove(dot);
    CHECK(h.prog.running());
    CHECK(tracer_of(h.prog.pid()) == 0);
}

TEST_CASE("triage: a deadlocked MPI ring under mpirun -np 4: queues, cycle in every sample, merged tree, exit 3",
          "[e2e][triage][mpi]") {
    REQUIRE(fs::exists(mpirun()));
    background_process job({mpirun(), "--allow-run-as-root", "--oversubscribe", "-np", "4",
                            mpi_example("mpi_ring_deadlock")},
                           run_options().set_env("OMPI_MCA_rmaps_base_oversubscribe", "1").timeout_after(300s));
    // Each rank logs its receive just before it posts it.
    std::set<int> posted;
    std::regex re(R"(MPI-LOG rank=(\d+) pid=\d+ op=recv peer=(\d+) tag=7)");
    while (posted.size() < 4) {
        auto l = job.wait_for_line(re, 120s);
        REQUIRE(l);
        std::smatch m;
        std::regex_search(*l, m, re);
        posted.insert(std::stoi(m[1]));
    }
    fs::path dot = fs::temp_directory_path() / ("ompdbg-triage-mpi-" + std::to_string(::getpid()) + ".dot");
    // A deadlock needs the cycle in every sample and no MPI message moved in between.
    auto r = triage({std::to_string(job.pid()), "--samples", "3", "--interval", "0.2", "--dot", dot.string()});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Catch::Contains("the cycle in all 3 samples, and no MPI message of rank 0-3 sent or matched "
                                      "between them"));
    // mpirun is a symlink to Open MPI's orterun: the report names the executable.
    CHECK(std::regex_search(r.out, std::regex("MPI job of (mpirun|orterun) \\(pid " + std::to_string(job.pid()) +
                                              "\\): 4 ranks of " + mpi_example("mpi_ring_deadlock"))));
    CHECK_THAT(r.out, Catch::Contains("Verdict: deadlock: rank 0-3 wait on each other"));
    CHECK_THAT(r.out, Catch::Contains("Deadlock: 0 -> 3 -> 2 -> 1 -> 0"));
    // Every rank's receive from its left neighbour, as each rank logged it.
    for (int rank = 0; rank < 4; ++rank) {
        CHECK_FALSE(line_with(r.out, {"Rank " + std::to_string(rank) + ": MPI_COMM_WORLD pending receive: from rank " +
                                          std::to_string((rank + 3) % 4) + ", tag 7"})
                        .empty());
        CHECK_FALSE(line_with(r.out, {"== Rank " + std::to_string(rank) + " (pid"}).empty());
    }
    // The merged tree: every rank's main thread in MPI_Recv at the ring's line.
    CHECK_THAT(r.out, Catch::Contains("== Merged stacks of rank 0-3"));
    CHECK_FALSE(line_with(r.out, {"main at " + example_location("mpi/mpi_ring_deadlock.c", "ring_recv"),
                                  "[rank 0-3, 4 threads]"})
                    .empty());
    CHECK_FALSE(line_with(r.out, {"MPI_Recv [rank 0-3"}).empty());
    std::ifstream in(dot);
    std::string dot_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(dot_text, Catch::Contains("digraph triage_stacks"));
    CHECK_THAT(dot_text, Catch::Contains("MPI_Recv"));
    fs::remove(dot);
    // One snapshot is no evidence of a deadlock: the report says so, and exits 0.
    auto one = triage({std::to_string(job.pid()), "--samples", "1"});
    INFO(one.all());
    REQUIRE_FALSE(one.timed_out);
    CHECK(one.exit_code == 0);
    CHECK_THAT(one.out, Catch::Contains("Verdict: a wait-for cycle in one snapshot (0 -> 3 -> 2 -> 1 -> 0, each "
                                        "blocked in MPI_Recv(tag 7)): one snapshot cannot tell a deadlock from a "
                                        "momentary wait"));
    CHECK_THAT(one.out, Catch::Contains("Wait-for cycle in the last sample: 0 -> 3 -> 2 -> 1 -> 0"));
    CHECK_THAT(one.out, !Catch::Contains("Verdict: deadlock"));
    // The job runs on: mpirun and its ranks are alive and untraced.
    CHECK(job.running());
    CHECK(tracer_of(job.pid()) == 0);
}

TEST_CASE("triage: a libgomp team hung in a barrier is labelled through ompdbg's DMPL library (no OMPD)",
          "[e2e][triage][dmpl]") {
    if (!have_omp_examples()) {
        return;
    }
    // The same program built with gcc -fopenmp: GNU libgomp, which has no OMPD.
    hung_team h("omp_hang_barrier_libgomp");
    auto r = triage_hung(h);
    INFO(r.all());
    CHECK_FALSE(line_with(r.out, {"OpenMP runtime ", "libgomp", "labels from ompdbg's DMPL library (no OMPD)"})
                    .empty());
    // Every thread of the team runs main's outlined region; 7 wait in GOMP_barrier (the
    // program's `#pragma omp barrier`), the odd one is in its own code (read()).
    std::string region = "region omp parallel in main at " + example_location("openmp/omp_hang_barrier.c", "region");
    std::string waiting = line_with(r.out, {"=> 6 threads", "barrier wait (GOMP_barrier)"});
    CHECK_THAT(waiting, Catch::Contains(region));
    CHECK_FALSE(line_with(r.out, {"=> 1 thread (1): barrier wait (GOMP_barrier)", region}).empty());
    CHECK_FALSE(line_with(r.out, {"=> 1 thread", "in the region", region}).empty());
    std::string finding = line_with(r.out, {"7 of 8 OpenMP threads wait in a barrier"});
    CHECK_THAT(finding, Catch::Contains("of the " + region));
    // The odd thread by its OpenMP number, which libgomp's per-thread data gives.
    CHECK_THAT(finding, Catch::Contains("OpenMP thread " + std::to_string(h.odd) + " is in the region in "));
    CHECK_THAT(finding, Catch::Contains(odd_read_at()));
    // The JSON document: the encountering thread (the process's main thread) is OpenMP
    // thread 0, the odd thread the number the program printed, all 8 distinct, team of 8.
    auto j = triage({"--json", std::to_string(h.prog.pid()), "--samples", "1"});
    INFO(j.all());
    auto doc = nlohmann::json::parse(j.out);
    const auto& p = doc["processes"][0];
    CHECK(p["openmp"]["source"] == "ompdbg's DMPL library (no OMPD)");
    int in_barrier = 0, openmp = 0;
    std::set<int> numbers;
    for (const auto& th : p["threads"]) {
        if (!th["openmp"].get<bool>()) {
            continue;
        }
        ++openmp;
        CHECK(th["team_size"] == h.team);
        CHECK(th["level"] == 1);
        numbers.insert(th["thread_num"].get<int>());
        CHECK_THAT(th["region"].get<std::string>(), Catch::Contains(example_location("openmp/omp_hang_barrier.c", "region")));
        if (th["tid"] == h.prog.pid()) {
            CHECK(th["thread_num"] == 0);
        }
        if (th["tid"] == h.odd_tid) {
            CHECK(th["thread_num"] == h.odd);
        }
        in_barrier += th["state"] == "barrier wait (GOMP_barrier)";
        if (th["tid"] == h.odd_tid) {
            CHECK(th["state"] == "in the region");
        }
    }
    CHECK(openmp == 8);
    CHECK(numbers == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(in_barrier == 7);
    CHECK(j.exit_code == 0);   // one snapshot: nothing to compare
    CHECK(h.prog.running());
    CHECK(tracer_of(h.prog.pid()) == 0);
}

TEST_CASE("triage: a team busy-waiting in a barrier for a blocked thread is a hang, and says what burns CPU",
          "[e2e][triage][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    // KMP_BLOCKTIME=infinite: the 7 threads spin in the barrier (the program saw each use
    // 100 ms of CPU time there) while thread 3 sleeps in read(): CPU time moves, nothing else.
    hung_team h("omp_hang_barrier", true);
    REQUIRE(h.ready);
    auto r = triage({"--json", std::to_string(h.prog.pid()), "--samples", "3", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 4);
    auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["verdict"]["kind"] == "hang");
    std::string verdict = doc["verdict"]["text"];
    CHECK_THAT(verdict, Catch::StartsWith("hang: no thread moved in 3 samples"));
    CHECK_THAT(verdict, Catch::Contains("every stack unchanged"));
    CHECK_THAT(verdict, Catch::Contains("7 threads busy-wait in ompt_state_wait_barrier"));
    CHECK_THAT(verdict, Catch::Contains("without progress"));
    // Per thread: the 7 barrier threads burnt CPU time, the one in read() none.
    std::map<pid_t, bool> busy;
    for (const auto& c : doc["movement"]["cpu"]) {
        busy[c["tid"].get<pid_t>()] = c["busy"].get<bool>();
    }
    int spinning = 0;
    REQUIRE(doc["processes"].size() == 1);
    for (const auto& t : doc["processes"][0]["threads"]) {
        if (t["openmp"] == true && t["state"].get<std::string>().find("wait_barrier") != std::string::npos) {
            CHECK(busy[t["tid"].get<pid_t>()]);
            ++spinning;
        }
    }
    CHECK(spinning == h.team - 1);
    REQUIRE(busy.count(h.odd_tid) == 1);
    CHECK_FALSE(busy[h.odd_tid]);
    check_documented(doc["movement"], documented_triage_schema());
    CHECK(h.prog.running());
    CHECK(tracer_of(h.prog.pid()) == 0);
}

TEST_CASE("triage: a healthy computing program moves between samples and keeps its sequence",
          "[e2e][triage][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    background_process prog({omp_example("omp_progress")}, run_options().set_env("OMP_DEBUG", "enabled"));
    REQUIRE(prog.wait_for_line(std::regex("^step 1 value"), 60s));
    auto r = triage({std::to_string(prog.pid()), "--samples", "3", "--interval", "0.3"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Verdict: progressing: "));
    CHECK_THAT(r.out, Catch::Contains("in 3 samples"));
    // After the triage the program goes on computing the right values, without a gap.
    std::regex step(R"(^step (\d+) value (-?\d+)$)");
    long last = 1;
    for (int k = 0; k < 3; ++k) {
        auto l = prog.wait_for_line(step, 60s);
        REQUIRE(l);
        std::smatch m;
        std::regex_match(*l, m, step);
        long n = std::stol(m[1]);
        CHECK(n == last + 1);
        CHECK(std::stol(m[2]) == progress_value(n));
        last = n;
    }
    CHECK(tracer_of(prog.pid()) == 0);
}

TEST_CASE("triage: a plain process (no OpenMP, not a starter) runs on without a gap", "[e2e][triage]") {
    background_process prog({example_path("counter")});
    std::regex counter(R"(^counter (\d+)$)");
    REQUIRE(prog.wait_for_line(counter, 30s));
    auto r = triage({std::to_string(prog.pid()), "--samples", "1"});
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Process " + std::to_string(prog.pid()) + " (counter)"));
    CHECK_THAT(r.out, Catch::Contains("Verdict: no deadlock found in one snapshot"));
    CHECK_THAT(r.out, Catch::Contains("main at counter.c:"));
    CHECK(r.out.find("OpenMP runtime") == std::string::npos);
    // The sequence goes on: every number once, in order.
    long prev = -1;
    for (int k = 0; k < 5; ++k) {
        auto l = prog.wait_for_line(counter, 30s);
        REQUIRE(l);
        long n = std::stol(l->substr(8));
        if (prev >= 0) {
            CHECK(n == prev + 1);
        }
        prev = n;
    }
}

TEST_CASE("triage: --core of a hung OpenMP program shows the labelled team", "[e2e][triage][ompd][core]") {
    if (!have_omp_examples()) {
        return;
    }
    hung_team h;
    REQUIRE(h.ready);
    fs::path core = fs::temp_directory_path() / ("ompdbg-triage-" + std::to_string(::getpid()) + ".core");
    auto g = run({"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off", "-p", std::to_string(h.prog.pid()),
                  "-ex", "gcore " + core.string()},
                 run_options().timeout_after(120s));
    REQUIRE(fs::exists(core));
    auto r = triage({"--core", omp_example("omp_hang_barrier"), core.string()});
    INFO(r.all() + g.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);   // gcore: no signal ended it, no deadlock
    CHECK_THAT(r.out, Catch::Contains("Triage of Core " + core.string()));
    CHECK_FALSE(line_with(r.out, {"at " + barrier_at(), "[6 threads]"}).empty());
    CHECK_FALSE(line_with(r.out, {"=> 6 threads", "wait_barrier", "team 8)"}).empty());
    CHECK_FALSE(line_with(r.out, {"7 of 8 OpenMP threads wait in a barrier"}).empty());
    CHECK_THAT(r.out, Catch::Contains("Verdict: no deadlock found in the core"));
    fs::remove(core);
}

TEST_CASE("triage: bad input gives one message and its own exit status", "[e2e][triage]") {
    SECTION("no argument: usage, 2") {
        auto r = triage({});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("ompdbg triage PID | --core PROG CORE"));
    }
    SECTION("a pid that is no number: usage, 2") {
        auto r = triage({"12ab"});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("Illegal process-id: 12ab."));
    }
    SECTION("--samples 0: usage, 2") {
        auto r = triage({"1", "--samples", "0"});
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("Invalid --samples \"0\""));
    }
    SECTION("no such process: gather failed, 1") {
        // A pid beyond pid_max cannot exist.
        std::ifstream in("/proc/sys/kernel/pid_max");
        long pid_max = 0;
        in >> pid_max;
        auto r = triage({std::to_string(pid_max + 1)});
        INFO(r.all());
        CHECK(r.exit_code == 1);
        CHECK(lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("ompdbg triage: "));
        CHECK(r.term_signal == 0);
    }
    SECTION("a corrupt core: gather failed, 1, also in JSON") {
        fs::path bad = fs::temp_directory_path() / ("ompdbg-triage-bad-" + std::to_string(::getpid()) + ".core");
        {
            std::ofstream out(bad);
            out << "this is not a core dump\n";
        }
        auto r = triage({"--core", example_path("counter"), bad.string()});
        INFO(r.all());
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Catch::Contains("is not a core dump"));
        auto j = triage({"--json", "--core", example_path("counter"), bad.string()});
        auto doc = nlohmann::json::parse(j.out);
        CHECK(doc["verdict"]["kind"] == "gather-failed");
        CHECK(doc["exit_status"] == 1);
        CHECK(j.exit_code == 1);
        fs::remove(bad);
    }
}
