// `omp compare`, `thread compare`, `thread where`, `mpi compare` and `rank where` end to end
// (issue 20): the example programs print what each OpenMP thread or rank holds ("truth:
// compare ..."), and the groups ompdbg prints are checked against those lines.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "mpi_job_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
namespace fs = std::filesystem;

namespace {

std::string omp_compare_program() { return std::string(examples_dir) + "/openmp/omp_compare"; }
std::string mpi_compare_program() { return std::string(examples_dir) + "/mpi/mpi_compare"; }

bool have_omp_program() {
    if (!fs::exists(omp_compare_program())) {
        WARN("skipped: examples/openmp not built (no OMPD-enabled libomp; run scripts/bootstrap)");
        return false;
    }
    return true;
}

/// ompdbg stopped in work() of OpenMP thread 0 (every other thread arrived), then `cmds`.
run_result at_compare_stop(const std::vector<std::string>& cmds) {
    std::vector<std::string> all{"break " + example_location("openmp/omp_compare.cpp", "compare_stop"), "run"};
    all.insert(all.end(), cmds.begin(), cmds.end());
    return ompdbg_batch([&] {
        auto a = ex_args(all);
        a.push_back(omp_compare_program());
        return a;
    }(), run_options().timeout_after(std::chrono::seconds(120)));
}

/// key=value pairs of the "truth: compare K=V ..." lines, keyed by `key`'s value.
std::map<int, std::map<std::string, std::string>> truths(const std::string& out, const std::string& key) {
    std::map<int, std::map<std::string, std::string>> all;
    static const std::regex kv(R"(([\w.]+)=(\S+))");
    for (const auto& l : lines_of(out)) {
        auto pos = l.find("truth: compare ");
        if (pos == std::string::npos) {
            continue;
        }
        std::map<std::string, std::string> m;
        std::string rest = l.substr(pos);
        for (std::sregex_iterator it(rest.begin(), rest.end(), kv), end; it != end; ++it) {
            m[(*it)[1]] = (*it)[2];
        }
        if (m.count(key)) {
            all[std::stoi(m[key])] = m;
        }
    }
    return all;
}

/// "0-1,3" for members, as ompdbg's ranges (written here again, independently).
std::string ranges(std::vector<int> ids) {
    std::sort(ids.begin(), ids.end());
    std::string out;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) {
            ++j;
        }
        out += (out.empty() ? "" : ",") + std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
        i = j + 1;
    }
    return out;
}

/// The members of each distinct truth value of `field`, largest group first.
std::vector<std::pair<std::string, std::vector<int>>> groups_of(
    const std::map<int, std::map<std::string, std::string>>& t, const std::string& field) {
    std::map<std::string, std::vector<int>> by;
    for (const auto& [member, kv] : t) {
        if (kv.count(field)) {
            by[kv.at(field)].push_back(member);
        }
    }
    std::vector<std::pair<std::string, std::vector<int>>> out(by.begin(), by.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.second.size() != b.second.size() ? a.second.size() > b.second.size() : a.second[0] < b.second[0];
    });
    return out;
}

std::string omp_members(const std::vector<int>& ids) {
    return (ids.size() == 1 ? "OMP thread " : "OMP threads ") + ranges(ids);
}

/// The lines between the echo markers (`echo <name>\n` before each command).
std::vector<std::string> section(const std::string& out, const std::string& name) {
    std::vector<std::string> keep;
    bool in = false;
    for (const auto& l : lines_of(out)) {
        if (l.rfind("== ", 0) == 0) {
            in = l == "== " + name;
            continue;
        }
        if (in && l.rfind("truth:", 0) != 0 && l.rfind("[New ", 0) != 0) {
            keep.push_back(l);
        }
    }
    return keep;
}

std::vector<std::string> marked(const std::vector<std::pair<std::string, std::string>>& named) {
    std::vector<std::string> cmds;
    for (const auto& [name, cmd] : named) {
        cmds.push_back("echo == " + name + "\\n");
        cmds.push_back(cmd);
    }
    return cmds;
}

}  // namespace

TEST_CASE("omp compare groups each OpenMP thread's value as the threads printed them", "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto r = at_compare_stop(marked({{"x", "omp compare x"},
                                     {"resid", "omp compare resid"},
                                     {"resid-tol", "omp compare --tolerance 1e-6 resid"},
                                     {"resid-rtol", "omp compare --rtol 1e-6 resid"},
                                     {"far-tol", "omp compare --tolerance=1e-6 far"},
                                     {"arr", "omp compare arr"},
                                     {"pt", "omp compare pt"},
                                     {"v", "omp compare v"},
                                     {"total", "omp compare shared_total"}}));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    auto t = truths(r.out, "thread");
    REQUIRE(t.size() == 5);
    REQUIRE(t[4].count("x") == 0);   // thread 4 never entered work()

    // ints: one line per value, largest group first; thread 4 has no x.
    std::vector<std::string> want;
    for (auto& [value, ids] : groups_of(t, "x")) {
        want.push_back("x = " + value + "  [" + omp_members(ids) + "]");
    }
    want.push_back("x: not in scope  [OMP thread 4]");
    auto xs = section(r.out, "x");
    REQUIRE(xs.size() == want.size() + 1);
    CHECK(std::vector<std::string>(xs.begin(), xs.end() - 1) == want);
    CHECK(std::regex_match(xs.back(), std::regex(R"(count 4, min 4 \[OMP threads 0-1,3\], max 7 \[OMP thread 2\], mean 4\.75)")));

    // doubles 1e-9 apart: four values exactly, one within 1e-6 (absolute or relative).
    CHECK(section(r.out, "resid").size() == 4 + 1 + 1);
    auto tol = section(r.out, "resid-tol");
    REQUIRE(!tol.empty());
    CHECK(tol[0] == "resid = " + t[0]["resid"] + " .. " + t[3]["resid"] + "  [OMP threads 0-3]");
    CHECK(section(r.out, "resid-rtol")[0] == tol[0]);
    // far: thread 3's 0.5 is outside the tolerance.
    auto far = section(r.out, "far-tol");
    REQUIRE(far.size() >= 2);
    CHECK(far[0] == "far = 0.25  [OMP threads 0-2]");
    CHECK(far[1] == "far = 0.5  [OMP thread 3]");

    // The array differs in one element of thread 1, the struct in one field of thread 2,
    // the vector in one element of thread 3 (thread 1's other capacity does not count).
    auto arr = section(r.out, "arr");
    REQUIRE(arr.size() == 3);
    CHECK(arr[0] == "arr = {0, 10, 20, 30, 40, 50, 60, 70}  [OMP threads 0,2-3]");
    CHECK(arr[1] == "arr = {0, 10, 20, 30, 40, " + t[1]["arr5"] +
                        ", 60, 70}  [OMP thread 1]  (differs from the majority in 1 of 8 elements, first arr[5])");
    auto pt = section(r.out, "pt");
    REQUIRE(pt.size() == 3);
    CHECK(pt[0] == "pt = {x = 1, y = 2.5}  [OMP threads 0-1,3]");
    CHECK(pt[1] == "pt = {x = 1, y = " + t[2]["pt.y"] +
                       "}  [OMP thread 2]  (differs from the majority in 1 of 2 fields, first pt.y)");
    CHECK(t[1]["cap"] != t[0]["cap"]);
    auto v = section(r.out, "v");
    REQUIRE(v.size() == 3);
    CHECK(std::regex_match(v[0], std::regex(R"(v = std::vector of length 3, capacity \d+ = \{1, 2, 3\}  \[OMP threads 0-2\])")));
    CHECK(v[1] == "v = std::vector of length 3, capacity 3 = {1, 2, " + std::string(1, t[3]["v"].back()) +
                      "}  [OMP thread 3]  (differs from the majority in 1 of 3 elements, first v[2])");
    CHECK(v[2] == "v: not in scope  [OMP thread 4]");

    // A global is the same wherever a thread stands.
    auto total = section(r.out, "total");
    REQUIRE(!total.empty());
    CHECK(total[0] == "shared_total = 42  [OMP threads 0-4]");
}

TEST_CASE("omp compare --expect-equal sets the exit status of --batch", "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto same = at_compare_stop({"omp compare --expect-equal shared_total"});
    INFO(same.all());
    REQUIRE_FALSE(same.timed_out);
    CHECK(same.ok());
    CHECK(has_line(same.out, "shared_total = 42  [OMP threads 0-4]"));
    auto differ = at_compare_stop({"omp compare --expect-equal x", "echo after\\n"});
    INFO(differ.all());
    REQUIRE_FALSE(differ.timed_out);
    CHECK(differ.exit_code == 1);
    CHECK(has_line(differ.out, "x = 7  [OMP thread 2]"));   // the groups are printed first
    CHECK(has_line(differ.err, "x is not the same everywhere: 2 values, 1 thread without one."));
    CHECK(has_line(differ.out, "after"));   // the session goes on
}

TEST_CASE("thread where lists the threads where the expression is true, and thread compare uses gdb's numbers",
          "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto r = at_compare_stop({"info threads", "thread where x > 5", "thread compare --bogus x"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto t = truths(r.out, "thread");
    REQUIRE(t.count(2) == 1);
    // gdb's number of OpenMP thread 2, from its LWP in `info threads`.
    std::smatch m;
    std::regex row("^[* ] (\\d+)\\s+Thread 0x[0-9a-f]+ \\(LWP " + t[2]["lwp"] + "\\)");
    std::string number;
    for (const auto& l : lines_of(r.out)) {
        if (std::regex_search(l, m, row)) {
            number = m[1];
        }
    }
    REQUIRE(!number.empty());
    CHECK(has_line(r.out, "x > 5 is true in thread " + number + " (1 of 5)."));
    CHECK(has_line(r.err, "Unknown option \"--bogus\": thread compare [--tolerance X] [--rtol X] "
                          "[--expect-equal] EXPR"));
}

TEST_CASE("omp compare refuses side effects and bad arguments in one line, the session goes on", "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto r = at_compare_stop({"omp compare x++", "omp compare x = 3", "omp compare omp_checkpoint(1)", "omp compare (x",
                              "omp compare --tolerance abc x", "omp compare --rtol -1 x", "omp compare", "print x"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.err, "Refusing \"x++\": an increment (x++) would run in every thread."));
    CHECK(has_line(r.err, "Refusing \"x = 3\": an assignment (x = 3) would run in every thread."));
    CHECK(has_line(r.err, "Refusing \"omp_checkpoint(1)\": a function call (omp_checkpoint(1)) would run in every "
                          "thread."));
    CHECK(has_line(r.err, "A syntax error in expression, near `'."));
    CHECK(has_line(r.err, "Invalid tolerance \"abc\": a number >= 0."));
    CHECK(has_line(r.err, "Invalid relative tolerance \"-1\": a number >= 0."));
    CHECK(has_line(r.err, "Argument required (expression to compute): omp compare [--tolerance X] [--rtol X] "
                          "[--expect-equal] EXPR"));
    CHECK(std::regex_search(r.out, std::regex(R"(\$1 = 4\n)")));   // nothing was changed
    auto before = ompdbg_batch({"-ex", "omp compare x", omp_compare_program()},
                               run_options().timeout_after(std::chrono::seconds(60)));
    CHECK(has_line(before.err, "The program is not being run."));
}

TEST_CASE("omp compare groups the threads without a value by the reason, in gdb's words", "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto r = at_compare_stop(marked({{"null", "omp compare *(int*)8"},
                                     {"nosuch", "omp compare no_such_name"},
                                     {"mixed", "omp compare others"}}));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(section(r.out, "null") == std::vector<std::string>{"*(int*)8: cannot access memory  [OMP threads 0-4]"});
    CHECK(section(r.out, "nosuch") == std::vector<std::string>{"no_such_name: not in scope  [OMP threads 0-4]"});
    // work()'s parameter: threads 0-3 are in work(), thread 4 is not.
    auto mixed = section(r.out, "mixed");
    REQUIRE(mixed.size() == 3);
    CHECK(mixed[0] == "others = 4  [OMP threads 0-3]");
    CHECK(mixed[1] == "others: not in scope  [OMP thread 4]");
}

TEST_CASE("omp compare --json gives the groups, errors and summary as one result", "[e2e][compare][omp]") {
    if (!have_omp_program()) {
        return;
    }
    auto r = ompdbg_batch({"--json", "-ex", "break " + example_location("openmp/omp_compare.cpp", "compare_stop"),
                           "-ex", "run", "-ex", "omp compare x", omp_compare_program()},
                          run_options().timeout_after(std::chrono::seconds(120)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    std::optional<nlohmann::json> res;
    for (const auto& l : lines_of(r.out)) {
        auto j = nlohmann::json::parse(l, nullptr, false);
        if (!j.is_discarded() && j.value("command", "") == "omp compare x") {
            res = j["result"];
        }
    }
    REQUIRE(res);
    CHECK((*res)["expression"] == "x");
    CHECK((*res)["members"] == "omp threads");
    REQUIRE((*res)["groups"].size() == 2);
    CHECK((*res)["groups"][0]["value"] == "4");
    CHECK((*res)["groups"][0]["members"] == nlohmann::json::array({0, 1, 3}));
    CHECK((*res)["groups"][0]["count"] == 3);
    CHECK((*res)["errors"][0]["reason"] == "not in scope");
    CHECK((*res)["errors"][0]["members"] == nlohmann::json::array({4}));
    CHECK((*res)["summary"]["count"] == 4);
    CHECK((*res)["summary"]["max_members"] == nlohmann::json::array({2}));
    CHECK((*res)["equal"] == false);
}

// ---- MPI ----------------------------------------------------------------------------------

namespace {

/// The job stopped with rank 0 in checkpoint(), `up` in every rank, then `cmds`; the
/// ranks' truth lines from the file they append them to (mpirun may not forward the last
/// lines of a job that is stopped, then killed).
struct job_run {
    run_result r;
    std::map<int, std::map<std::string, std::string>> truth;
};

job_run compare_job(const std::vector<std::string>& cmds, const std::vector<std::string>& mpirun_options,
                    const std::vector<std::string>& prog_args) {
    REQUIRE(fs::exists(mpi::mpirun()));
    REQUIRE(fs::exists(mpi_compare_program()));
    std::string file = (fs::temp_directory_path() / ("ompdbg-compare-" + std::to_string(::getpid()) + ".truth")).string();
    fs::remove(file);
    std::vector<std::string> all{"break checkpoint", "run", "up"};
    all.insert(all.end(), cmds.begin(), cmds.end());
    auto args = ex_args(all);
    std::vector<std::string> job{"run", mpi::mpirun(), "--allow-run-as-root", "--oversubscribe"};
    job.insert(job.end(), mpirun_options.begin(), mpirun_options.end());
    job.insert(job.end(), {"-np", "4", mpi_compare_program()});
    job.insert(job.end(), prog_args.begin(), prog_args.end());
    args.insert(args.end(), job.begin(), job.end());
    job_run out;
    out.r = ompdbg_batch(args, run_options().timeout_after(std::chrono::seconds(180)).set_env("MPI_COMPARE_TRUTH", file));
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    out.truth = truths(text.str(), "rank");
    fs::remove(file);
    return out;
}

std::string rank_members(const std::vector<int>& ids) { return "rank " + ranges(ids); }

/// The `mpi compare resid` and `mpi compare st` sections against the ranks' truth.
void check_resid_and_st(const std::string& out, std::map<int, std::map<std::string, std::string>>& t) {
    std::vector<std::string> want;
    for (auto& [value, ids] : groups_of(t, "resid")) {
        want.push_back("resid = " + value + "  [" + rank_members(ids) + "]");
    }
    want.push_back("count 4, min 0.25 [rank 0-2], max 0.5 [rank 3], mean 0.3125");
    CHECK(section(out, "resid") == want);
    auto st = section(out, "st");
    REQUIRE(st.size() == 2);
    CHECK(st[1] == "st = {iter = 10, norm = " + t[2]["st.norm"] +
                       "}  [rank 2]  (differs from the majority in 1 of 2 fields, first st.norm)");
}

}  // namespace

TEST_CASE("mpi compare groups the ranks' values, and rank where focuses on the ranks where it holds",
          "[e2e][compare][mpi]") {
    auto [r, t] = compare_job(marked({{"resid", "mpi compare resid"},
                                 {"counts", "mpi compare --expect-equal counts"},
                                 {"st", "mpi compare st"},
                                 {"where", "rank where resid > 0.3"},
                                 {"print", "print my_rank"},
                                 {"all", "rank all"},
                                 {"none", "rank where resid > 7"},
                                 {"refused", "mpi compare resid = 1"},
                                 {"equal", "mpi compare --expect-equal st.iter"}}),
                         {}, {});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(t.size() == 4);
    check_resid_and_st(r.out, t);
    auto counts = section(r.out, "counts");
    REQUIRE(counts.size() == 2);
    CHECK(counts[1] == "counts = {4, 5, " + t[1]["counts2"] +
                           ", 7}  [rank 1]  (differs from the majority in 1 of 4 elements, first counts[2])");
    CHECK(has_line(r.err, "counts is not the same everywhere: 2 values."));
    // rank where: the focus is the ranks whose resid is above 0.3, and print runs only there.
    std::vector<int> above;
    for (auto& [rank, kv] : t) {
        if (std::stod(kv["resid"]) > 0.3) {
            above.push_back(rank);
        }
    }
    CHECK(has_line(r.out, "Focus: " + rank_members(above) + "."));
    CHECK(section(r.out, "print") == std::vector<std::string>{"$1 = " + std::to_string(above.front())});
    // An empty focus is refused and the focus stays.
    CHECK(has_line(r.err, "resid > 7 is true in no rank of the focus (of 4): the focus is unchanged."));
    CHECK(has_line(r.err, "Refusing \"resid = 1\": an assignment (resid = 1) would run in every rank."));
    CHECK(section(r.out, "equal") == std::vector<std::string>{"st.iter = 10  [rank 0-3]",
                                                              "count 4, min 10 [rank 0-3], max 10 [rank 0-3], mean 10"});
    // Three commands failed (counts, none, refused): batch mode says so with its status.
    CHECK(r.exit_code == 1);
}

TEST_CASE("mpi compare names a rank that exited as a group of its own", "[e2e][compare][mpi]") {
    // The last rank finalizes and exits (async_mpi_finalize: MPI_Finalize does not wait);
    // rank 0 reaches checkpoint only once that process is gone.
    auto [r, t] = compare_job({"mpi compare resid", "rank where resid < 0.3"}, {"--mca", "async_mpi_finalize", "1"},
                         {"exit-last"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(t.size() == 4);
    CHECK(std::regex_search(r.out, std::regex(R"(\[rank 3\] process \d+ exited with code 00)")));
    CHECK(has_line(r.out, "resid = " + t[0]["resid"] + "  [rank 0-2]"));
    CHECK(has_line(r.out, "resid: exited(0)  [rank 3]"));
    CHECK(has_line(r.out, "count 3, min 0.25 [rank 0-2], max 0.25 [rank 0-2], mean 0.25"));
    CHECK(has_line(r.out, "Focus: rank 0-2."));
}

TEST_CASE("mpi compare and rank where over ranks on two other hosts, reached through their gdbserver agents",
          "[e2e][compare][mpi][remote]") {
    REQUIRE(fs::exists(mpi::mpirun()));
    REQUIRE(fs::exists(mpi_compare_program()));
    simulated_cluster cluster({"node1", "node2"});
    std::string hosts = "/tmp/ompdbg-compare-hosts-" + std::to_string(::getpid());
    std::string file = "/tmp/ompdbg-compare-remote-" + std::to_string(::getpid()) + ".truth";
    struct cleanup {
        std::vector<std::string> paths;
        ~cleanup() {
            for (auto& p : paths) {
                fs::remove(p);
            }
        }
    } removed{{hosts, file}};
    fs::remove(file);
    {
        std::ofstream out(hosts);
        out << "node1 slots=2\nnode2 slots=2\n";
    }
    std::vector<std::string> args{"--rsh", cluster.rsh()};
    for (auto& a : ex_args(marked({{"ranks", "mpi ranks"},
                                   {"up", "up"},
                                   {"resid", "mpi compare resid"},
                                   {"st", "mpi compare st"},
                                   {"where", "rank where resid > 0.3"},
                                   {"print", "print my_rank"},
                                   {"all", "rank all"},
                                   {"release", "print released = 1"}}))) {
        args.push_back(a);
    }
    // The job stops with rank 0 in checkpoint(), every other rank inside solve().
    args.insert(args.begin() + 2, {"-ex", "break checkpoint", "-ex", "run"});
    args.insert(args.end(), {"-ex", "delete", "-ex", "continue", "run", "--", mpi::mpirun(), "--allow-run-as-root",
                             "--oversubscribe", "--hostfile", hosts, "--mca", "plm_rsh_agent", cluster.rsh(), "--mca",
                             "oob_tcp_if_include", "lo", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
                             "lo", "--mca", "mpi_yield_when_idle", "1", "-x", "MPI_COMPARE_TRUTH", "-np", "4",
                             mpi_compare_program()});
    auto r = ompdbg_batch(args, cluster.options(run_options().timeout_after(std::chrono::seconds(240)))
                                    .set_env("MPI_COMPARE_TRUTH", file));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    auto t = truths(text.str(), "rank");
    REQUIRE(t.size() == 4);
    // Every rank is on a simulated host, reached through that host's agent.
    auto table = section(r.out, "ranks");
    CHECK(std::count_if(table.begin(), table.end(), [](const std::string& l) {
              return l.find("gdbserver via node") != std::string::npos;
          }) == 4);
    check_resid_and_st(r.out, t);
    CHECK(has_line(r.out, "Focus: rank 3."));
    CHECK(section(r.out, "print") == std::vector<std::string>{"$1 = 3"});
    for (int rank = 0; rank < 4; ++rank) {
        CHECK(has_line(r.out, "rank " + std::to_string(rank) + " done"));
    }
    CHECK(r.ok());
}

namespace {

/// The members of "[threads 1,3-4]" or "... true in threads 1,3-4 (3 of 6).", expanded.
std::set<int> members_of(const std::string& line) {
    std::set<int> out;
    std::smatch m;
    if (!std::regex_search(line, m, std::regex(R"((?:\[|true in )threads? ([0-9,-]+))"))) {
        return out;
    }
    std::stringstream list(m[1].str());
    std::string piece;
    while (std::getline(list, piece, ',')) {
        auto dash = piece.find('-');
        int lo = std::stoi(piece.substr(0, dash));
        int hi = dash == std::string::npos ? lo : std::stoi(piece.substr(dash + 1));
        for (int i = lo; i <= hi; ++i) {
            out.insert(i);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("omp compare in nested teams, and without OMPD, compares every thread by gdb's numbers and says why",
          "[e2e][compare][omp]") {
    struct variant {
        std::string program, reason;
    };
    auto v = GENERATE(variant{"omp_nested", "OpenMP thread numbers repeat across the teams of nested regions"},
                      variant{"omp_nested_libgomp", "which has no OMPD support"},
                      variant{"omp_nested_debian_libomp", "has no OMPD support"});
    std::string program = std::string(examples_dir) + "/openmp/" + v.program;
    if (!fs::exists(program)) {
        WARN("skipped: " << program << " not built (run scripts/bootstrap)");
        return;
    }
    CAPTURE(program);
    auto r = ompdbg_batch([&] {
        auto a = ex_args({"break " + example_location("openmp/omp_nested.c", "nested-checkpoint"), "run",
                          "echo == outer\\n", "omp compare outer", "echo == inner\\n", "omp compare inner",
                          "echo == where\\n", "thread where inner == 0", "echo == equal\\n",
                          "omp compare --expect-equal inner"});
        a.push_back(program);
        return a;
    }(), run_options().timeout_after(std::chrono::seconds(120)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    // Ground truth: how many threads of the inner teams hold each outer and inner number.
    std::map<std::string, int> outer_count, inner_count;
    std::regex truth_re(R"(thread outer=(\d+) inner=(\d+) )");
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, truth_re)) {
            ++outer_count[m[1]];
            ++inner_count[m[2]];
        }
    }
    REQUIRE(outer_count.size() == 2);
    REQUIRE(inner_count.size() == 3);
    const std::string said = "No OpenMP thread numbers (";
    auto outer = section(r.out, "outer");
    REQUIRE(outer.size() == 4);
    CHECK(outer[0].rfind(said, 0) == 0);
    CHECK(outer[0].find(v.reason) != std::string::npos);
    CHECK(outer[0].ends_with("): comparing every thread."));
    std::set<int> all;
    for (int i = 1; i <= 2; ++i) {
        std::smatch m;
        REQUIRE(std::regex_search(outer[i], m, std::regex(R"(^outer = (\d)  \[threads [0-9,-]+\]$)")));
        auto members = members_of(outer[i]);
        CHECK(members.size() == static_cast<std::size_t>(outer_count[m[1]]));
        all.insert(members.begin(), members.end());
    }
    CHECK(all.size() == 6);
    auto inner = section(r.out, "inner");
    REQUIRE(inner.size() == 5);
    std::set<int> inner_zero;
    for (int i = 1; i <= 3; ++i) {
        std::smatch m;
        REQUIRE(std::regex_search(inner[i], m, std::regex(R"(^inner = (\d)  \[threads [0-9,-]+\]$)")));
        CHECK(members_of(inner[i]).size() == static_cast<std::size_t>(inner_count[m[1]]));
        if (m[1] == "0") {
            inner_zero = members_of(inner[i]);
        }
    }
    // thread where names the same threads as the group of the same value.
    auto where = section(r.out, "where");
    REQUIRE(where.size() >= 1);
    CHECK(members_of(where.back()) == inner_zero);
    CHECK(has_line(r.err, "inner is not the same everywhere: 3 values."));
    CHECK(r.exit_code == 1);
}

TEST_CASE("thread compare groups an optimized-out value, and any operation on it, as optimized out",
          "[e2e][compare]") {
    auto program = GENERATE(from_range(example_variants("dropped_params", 2)));
    CAPTURE(program);
    // Two frames up from record(), kernel's `wts` has no location (gcc and clang): gdb's
    // `info args` says <optimized out>, and so does every member of the comparison.
    auto r = ompdbg_batch([&] {
        auto a = ex_args({"break record", "run", "up", "up", "echo == plain\\n", "thread compare wts",
                          "echo == sum\\n", "thread compare wts + 1", "echo == where\\n", "thread where wts > 0"});
        a.push_back(program);
        return a;
    }(), run_options().timeout_after(std::chrono::seconds(60)));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(section(r.out, "plain") == std::vector<std::string>{"wts: optimized out  [thread 1]"});
    CHECK(section(r.out, "sum") == std::vector<std::string>{"wts + 1: optimized out  [thread 1]"});
    CHECK(section(r.out, "where") ==
          std::vector<std::string>{"wts > 0 is true in no thread (of 1).", "wts > 0: optimized out  [thread 1]"});
}
