// MPI2DD events in `--json` mode (docs/json.md, "MPI2DD jobs"): every stdout line is parsed
// with nlohmann-json, every MPI2DD object is checked against the table of that section, and
// its content against what the processes print about themselves (in JSON mode the job's
// output goes to ompdbg's stderr).

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "mpi2dd_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi2dd;

namespace {

/// One documented key: "`pids?`: array".
struct documented_key {
    std::string name;
    std::string type;
    bool optional = false;
};

/// The rows of the table under "## MPI2DD jobs" in docs/json.md, by object
/// ("event:mpi2dd").
std::map<std::string, std::vector<documented_key>> mpi2dd_schema() {
    std::ifstream doc(std::string(examples_source_dir) + "/../docs/json.md");
    REQUIRE(doc);
    std::map<std::string, std::vector<documented_key>> table;
    const std::regex row_re(R"(^\| `(event:[a-z0-9-]+)` \| (.*) \|$)");
    const std::regex key_re(R"(`([a-z_]+)(\??)`: ([a-z]+))");
    std::string section;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("## ", 0) == 0) {
            section = line;
        }
        std::smatch m;
        if (section != "## MPI2DD jobs" || !std::regex_match(line, m, row_re)) {
            continue;
        }
        auto& keys = table[m[1]];
        std::string spec = m[2];
        for (std::sregex_iterator k(spec.begin(), spec.end(), key_re), e; k != e; ++k) {
            keys.push_back({(*k)[1], (*k)[3], (*k)[2].length() > 0});
        }
    }
    return table;
}

bool is_of_type(const nlohmann::json& v, const std::string& t) {
    return (t == "integer" && v.is_number_integer()) || (t == "string" && v.is_string()) ||
           (t == "boolean" && v.is_boolean()) || (t == "array" && v.is_array()) || (t == "object" && v.is_object());
}

/// Every stdout line as JSON; the MPI2DD events checked against the documented table.
std::vector<nlohmann::json> parsed(const std::string& out) {
    static const auto schema = mpi2dd_schema();
    REQUIRE(schema.count("event:mpi2dd"));
    REQUIRE(schema.count("event:mpi-job"));
    std::vector<nlohmann::json> all;
    for (auto& l : lines_of(out)) {
        INFO("line: " << l);
        nlohmann::json j;
        REQUIRE_NOTHROW(j = nlohmann::json::parse(l));
        REQUIRE(j.is_object());
        if (j.value("type", "") == "event") {
            auto it = schema.find("event:" + j.value("event", ""));
            if (it != schema.end()) {
                for (auto& k : it->second) {
                    INFO("key " << k.name);
                    if (!k.optional || j.contains(k.name)) {
                        REQUIRE(j.contains(k.name));
                        CHECK(is_of_type(j[k.name], k.type));
                    }
                }
            }
        }
        all.push_back(std::move(j));
    }
    return all;
}

/// The events of `kind` (and of MPI2DD `state` when given), in order.
std::vector<nlohmann::json> events_of(const std::vector<nlohmann::json>& all, const std::string& kind,
                                      const std::string& state = {}) {
    std::vector<nlohmann::json> out;
    for (auto& j : all) {
        if (j.value("type", "") == "event" && j.value("event", "") == kind &&
            (state.empty() || j.value("debug_state", "") == state)) {
            out.push_back(j);
        }
    }
    return out;
}

/// The MPI2DD event that acquired processes (non-empty `pids`); the union of its pids.
std::vector<nlohmann::json> acquiring(const std::vector<nlohmann::json>& all) {
    std::vector<nlohmann::json> out;
    for (auto& e : events_of(all, "mpi2dd")) {
        if (e.contains("pids") && !e["pids"].empty()) {
            out.push_back(e);
        }
    }
    return out;
}

run_result ompdbg_json_job(const std::vector<std::string>& cmds, const std::vector<std::string>& job) {
    auto args = ex_args(cmds);
    args.insert(args.begin(), "--json");
    args.push_back("run");
    args.insert(args.end(), job.begin(), job.end());
    return ompdbg_batch(args, run_options().timeout_after(std::chrono::seconds(180)));
}

std::set<int> pids_of(const nlohmann::json& array) {
    std::set<int> s;
    for (auto& p : array) {
        s.insert(p.get<int>());
    }
    return s;
}

}  // namespace

TEST_CASE("mpi2dd --json: START, SPAWN and each DIRECTORY_CHANGED as objects that match the ranks",
          "[e2e][mpi2dd][json]") {
    auto r = ompdbg_json_job({"start", "continue", "mpi ranks"}, {starter(), "-np", "3", app(), "--spawn", "2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    auto all = parsed(r.out);
    auto printed = reports(r.err);
    REQUIRE(printed.size() == 5);
    std::string world0 = world0_of(printed);
    int starter_pid = 0;
    std::set<int> world0_pids, spawned_pids;
    std::string world1;
    for (auto& p : printed) {
        if (p.world == world0) {
            world0_pids.insert(p.pid);
            starter_pid = p.ppid;   // the flat starter forks every rank itself
        } else {
            spawned_pids.insert(p.pid);
            world1 = p.world;
        }
    }
    REQUIRE(world0_pids.size() == 3);
    // START: the acquisition, each process as it names itself.
    auto job = events_of(all, "mpi-job");
    REQUIRE(job.size() == 1);
    CHECK(job[0]["interface"] == "MPI2DD");
    CHECK(job[0]["starter"] == starter_pid);
    CHECK(job[0]["ranks"] == 3);
    CHECK(job[0]["directories"] == 0);
    REQUIRE(job[0]["processes"].size() == 3);
    for (auto& proc : job[0]["processes"]) {
        auto self = std::find_if(printed.begin(), printed.end(), [&](auto& p) { return p.pid == proc["pid"]; });
        REQUIRE(self != printed.end());
        CHECK(proc["comm_world"] == self->world);
        CHECK(proc["world_rank"] == self->rank);
        CHECK(proc["rank"] == self->rank);
        CHECK(proc["listed_by"] == starter_pid);
    }
    // SPAWN has its object. The spawned processes are acquired at the first event after
    // the starter listed them: SPAWN, or a DIRECTORY_CHANGED of a rank that ended while
    // the starter waited for them; either names them with the parent they state.
    auto spawn = events_of(all, "mpi2dd", "SPAWN");
    REQUIRE(spawn.size() == 1);
    CHECK(spawn[0]["process"] == starter_pid);
    auto got = acquiring(all);
    REQUIRE(got.size() == 1);
    CHECK((got[0]["debug_state"] == "SPAWN" || got[0]["debug_state"] == "DIRECTORY_CHANGED"));
    CHECK(got[0]["process"] == starter_pid);
    CHECK(got[0]["comm_world"] == world1);
    CHECK(pids_of(got[0]["pids"]) == spawned_pids);
    CHECK(got[0]["new_ranks"] == nlohmann::json::array({3, 4}));
    CHECK(got[0]["parent"]["comm_world"] == world0);
    CHECK(got[0]["parent"]["rank"] == 0);
    CHECK(got[0]["parent"]["sequence"] == 0);
    CHECK(got[0].contains("text"));
    for (auto& p : printed) {
        if (p.world == world1) {
            CHECK(p.parent == world0 + ":0");
            CHECK(p.seq == 0);
        }
    }
    // DIRECTORY_CHANGED: the flat starter holds all five processes and raises one as each
    // ends; those that bring nothing new are JSON only (text mode reports the rank's end).
    auto changed = events_of(all, "mpi2dd", "DIRECTORY_CHANGED");
    REQUIRE(changed.size() == 5);
    for (auto& c : changed) {
        CHECK(c["process"] == starter_pid);
        CHECK(c.contains("text") == !c["pids"].empty());
    }
    CHECK(changed.back()["listed_processes"] == 0);
    // `mpi ranks`: every process once, as it names itself.
    const nlohmann::json* ranks = nullptr;
    for (auto& j : all) {
        if (j.value("type", "") == "command" && j.value("command", "") == "mpi ranks") {
            ranks = &j;
        }
    }
    REQUIRE(ranks);
    REQUIRE((*ranks)["result"]["ranks"].size() == 5);
    for (auto& row : (*ranks)["result"]["ranks"]) {
        auto self = std::find_if(printed.begin(), printed.end(), [&](auto& p) { return p.pid == row["pid"]; });
        REQUIRE(self != printed.end());
        CHECK(row["comm_world"] == self->world);
        CHECK(row["world_rank"] == self->rank);
        CHECK(row["state"] == "exited(0)");
    }
}

TEST_CASE("mpi2dd --json: METADIRECTORY_CHANGED names the new directory and its process", "[e2e][mpi2dd][json]") {
    auto r = ompdbg_json_job({"start", "continue"}, {starter(), "--dirs", "2", "-np", "4", app(), "--spawn", "1"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    auto all = parsed(r.out);
    auto printed = reports(r.err);
    REQUIRE(printed.size() == 5);
    std::string world0 = world0_of(printed);
    std::set<int> directories;   // the parents the first ranks name
    const self_report* spawned = nullptr;
    for (auto& p : printed) {
        if (p.world == world0) {
            directories.insert(p.ppid);
        } else {
            spawned = &p;
        }
    }
    REQUIRE(spawned);
    auto job = events_of(all, "mpi-job");
    REQUIRE(job.size() == 1);
    CHECK(job[0]["directories"] == 2);
    CHECK(pids_of(job[0]["directory_pids"]) == directories);
    for (auto& proc : job[0]["processes"]) {
        auto self = std::find_if(printed.begin(), printed.end(), [&](auto& p) { return p.pid == proc["pid"]; });
        REQUIRE(self != printed.end());
        CHECK(proc["listed_by"] == self->ppid);   // each directory lists the ranks it started
    }
    // The metadirectory raised METADIRECTORY_CHANGED as it added the spawn's directory and
    // as each of the three directories ended; the spawned process with its new directory
    // was acquired at the first or at an earlier DIRECTORY_CHANGED (a rank ended while the
    // starter waited for the new directory).
    auto meta = events_of(all, "mpi2dd", "METADIRECTORY_CHANGED");
    CHECK(meta.size() == 4);
    for (auto& m : meta) {
        CHECK(m["process"] == job[0]["starter"]);
        CHECK(m.contains("text") == (!m["pids"].empty() || !m["new_directories"].empty()));
    }
    auto got = acquiring(all);
    REQUIRE(got.size() == 1);
    CHECK(got[0]["pids"] == nlohmann::json::array({spawned->pid}));
    // Its directory was attached at that event or at an earlier one (listed before its
    // rank had started the program).
    std::set<int> new_dirs;
    for (auto& e : events_of(all, "mpi2dd")) {
        for (auto& d : e.value("new_directories", nlohmann::json::array())) {
            new_dirs.insert(d.get<int>());
        }
    }
    CHECK(new_dirs == std::set<int>{spawned->ppid});
    CHECK(got[0]["comm_world"] == spawned->world);
    CHECK(got[0]["parent"]["comm_world"] == world0);
    // Each directory raised DIRECTORY_CHANGED as its rank ended: JSON only, unless it
    // acquired the spawned process or its directory.
    directories.insert(spawned->ppid);
    auto changed = events_of(all, "mpi2dd", "DIRECTORY_CHANGED");
    CHECK(changed.size() == 5);
    for (auto& c : changed) {
        CHECK(directories.count(c["process"].get<int>()));
        CHECK(c.contains("text") == (!c["pids"].empty() || !c["new_directories"].empty()));
    }
}

TEST_CASE("mpi2dd --json: ABORT carries the abort message and the stopped ranks", "[e2e][mpi2dd][json]") {
    auto r = ompdbg_json_job({"start", "continue", "kill"}, {starter(), "-np", "3", app(), "--abort"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto all = parsed(r.out);
    // Rank 1 printed before it aborted; the others may be stopped before they print.
    auto printed = reports(r.err);
    auto rank1 = std::find_if(printed.begin(), printed.end(), [](auto& p) { return p.rank == 1; });
    REQUIRE(rank1 != printed.end());
    auto abort = events_of(all, "mpi2dd", "ABORT");
    REQUIRE(abort.size() == 1);
    CHECK(abort[0]["message"] == "MPI_Abort by rank 1 of " + rank1->world + ": rank 1 found an inconsistent state");
    CHECK(abort[0]["stopped_ranks"] == 3);   // -np 3
    CHECK(abort[0].contains("text"));
}

TEST_CASE("mpi2dd --json: ACCEPT, CONNECT and JOIN name the other job's processes", "[e2e][mpi2dd][json]") {
    std::string verb = GENERATE(std::string("accept"), std::string("connect"), std::string("join"));
    std::string other_verb = verb == "accept" ? "connect" : verb == "connect" ? "accept" : "join";
    std::string port = "/tmp/ompdbg-mpi2dd-json-" + std::to_string(::getpid()) + "-" + verb;
    background_process other({starter(), "--job", "other", "-np", "2", app(), "--" + other_verb, port,
                              "--wait-for-debugger"});
    // Our job starts once the other one is there: listening (JOIN: the other side must
    // listen first, or both would wait to connect), or with both ranks up.
    if (verb == "join") {
        REQUIRE(other.wait_for_line(std::regex("^mpi2dd-run: listening on "), std::chrono::seconds(60)));
    } else {
        for (int i = 0; i < 2; ++i) {
            REQUIRE(other.wait_for_line(std::regex("^MPI2DD-LOG rank="), std::chrono::seconds(60)));
        }
    }
    auto r = ompdbg_json_job({"start", "continue"}, {starter(), "--job", "mine", "-np", "2", app(), "--" + verb, port});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto all = parsed(r.out);
    std::string state = verb == "accept" ? "ACCEPT" : verb == "connect" ? "CONNECT" : "JOIN";
    auto ev = events_of(all, "mpi2dd", state);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0]["comm_world"] == "other/world0");
    CHECK(ev[0]["new_ranks"] == nlohmann::json::array({2, 3}));
    CHECK(ev[0]["pids"].size() == 2);
    CHECK_FALSE(ev[0].contains("parent"));
    auto end = other.wait_exit(std::chrono::seconds(60));
    REQUIRE(end);
    CHECK(end->exit_code == 0);
    // The pids are the other job's processes as they name themselves.
    std::set<int> their_pids;
    std::vector<std::string> their_lines = other.consumed_lines();
    for (auto& l : lines_of(end->out)) {
        their_lines.push_back(l);
    }
    for (auto& l : their_lines) {
        for (auto& p : reports(l)) {
            CHECK(p.world == "other/world0");
            their_pids.insert(p.pid);
        }
    }
    REQUIRE(their_pids.size() == 2);
    CHECK(pids_of(ev[0]["pids"]) == their_pids);
}
