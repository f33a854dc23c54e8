// OpenMP through OMPD, end to end: `ompdbg --batch` on the examples/openmp programs, stopped
// at known points, checked against what each program prints about itself (its own
// omp_get_* values, "truth: ..." lines) and against gdb with LLVM's OMPD python plugin.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
namespace fs = std::filesystem;

namespace {

const std::string omp_runtime_dir = std::string(cache_dir) + "/llvm-openmp-19.1.7/lib";

std::string omp_example(const std::string& name) {
    return std::string(examples_dir) + "/openmp/" + name;
}

/// False (with the reason in the test log) when the OMPD-enabled runtime is not built.
bool have_omp_examples() {
    if (!fs::exists(omp_example("omp_nested"))) {
        WARN("skipped: examples/openmp not built (no OMPD-enabled libomp in " + omp_runtime_dir +
             "; run scripts/bootstrap)");
        return false;
    }
    return true;
}

run_result ompdbg_on(const std::string& program, const std::vector<std::string>& cmds,
                     run_options opts = run_options().timeout_after(90s)) {
    std::vector<std::string> args;
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    args.push_back(program);
    return ompdbg_batch(args, opts);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

/// key=value pairs of the program's "truth: <tag> k=v ..." lines with that tag.
std::vector<std::map<std::string, std::string>> truths(const std::string& out, const std::string& tag) {
    std::vector<std::map<std::string, std::string>> all;
    static const std::regex kv(R"((\w+)=([^ ]+))");
    for (const auto& l : lines_of(out)) {
        auto pos = l.find("truth: " + tag);
        if (pos == std::string::npos) {
            continue;
        }
        std::map<std::string, std::string> m;
        std::string rest = l.substr(pos + 7 + tag.size());
        for (std::sregex_iterator it(rest.begin(), rest.end(), kv), end; it != end; ++it) {
            m[(*it)[1]] = (*it)[2];
        }
        all.push_back(m);
    }
    return all;
}

struct omp_thread_row {
    std::string id;
    int lwp = 0;
    std::string omp_num, state, level, team;
    std::string wait;
    bool is_openmp = false;
    bool selected = false;
};

/// Rows of `omp threads`.
std::vector<omp_thread_row> thread_rows(const std::string& out) {
    std::vector<omp_thread_row> rows;
    static const std::regex row(R"(^([* ]) (\S+)\s+(\d+)\s+(\S+)\s+(ompt_state_\w+|state \S+)\s+(\S+)\s+(\S+)\s+(\S+))");
    static const std::regex non(R"(^([* ]) (\S+)\s+(\d+)\s+-\s+\(not an OpenMP thread\))");
    for (const auto& l : lines_of(out)) {
        std::smatch m;
        if (std::regex_search(l, m, row)) {
            rows.push_back({m[2], std::stoi(m[3]), m[4], m[5], m[7], m[8], m[6], true, m[1] == "*"});
        } else if (std::regex_search(l, m, non)) {
            rows.push_back({m[2], std::stoi(m[3]), "-", "", "", "", "", false, m[1] == "*"});
        }
    }
    return rows;
}

/// "ICV name  scope  value" rows of `omp icvs` (or gdb's `ompd icvs`).
std::map<std::string, std::string> icv_rows(const std::string& out) {
    std::map<std::string, std::string> m;
    static const std::regex row(R"(^([a-z][a-z-]+-var)\s+(address_space|thread|parallel|task|implicit_task)\s+(.*)$)");
    for (const auto& l : lines_of(out)) {
        std::smatch sm;
        if (std::regex_search(l, sm, row)) {
            std::string v = sm[3];
            while (!v.empty() && v.back() == ' ') {
                v.pop_back();
            }
            m[sm[1]] = v;
        }
    }
    return m;
}

}  // namespace

TEST_CASE("omp threads at the nested checkpoint shows every thread at the level and team size it printed",
          "[ompd][e2e][!mayfail]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested"), {"break omp_checkpoint", "run", "omp threads"});
    INFO(r.all());
    REQUIRE(r.ok());
    auto inner = truths(r.out, "thread");
    REQUIRE(inner.size() == 6);
    auto rows = thread_rows(r.out);
    // 6 OS threads: the initial thread, the outer worker, and two inner workers per team.
    REQUIRE(rows.size() == 6);
    std::set<std::string> nums;
    for (const auto& row : rows) {
        CHECK(row.is_openmp);
        CHECK(row.level == inner[0]["level"]);
        CHECK(row.team == inner[0]["team_size"]);
        nums.insert(row.omp_num);
    }
    // Inner thread numbers 0..2, each twice (two inner teams).
    CHECK(nums == std::set<std::string>{"0", "1", "2"});
    // The stopped thread works; the others wait in the inner barrier or spin to it.
    auto selected = std::find_if(rows.begin(), rows.end(), [](const auto& row) { return row.selected; });
    REQUIRE(selected != rows.end());
    CHECK(selected->state == "ompt_state_work_parallel");
    CHECK(selected->omp_num == "0");
    for (const auto& row : rows) {
        if (!row.selected) {
            CHECK(row.state != "ompt_state_work_serial");
        }
    }
}

TEST_CASE("omp parallel shows the nesting and the team sizes the program printed", "[ompd][e2e][!mayfail]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested"), {"break omp_checkpoint", "run", "omp parallel"});
    INFO(r.all());
    REQUIRE(r.ok());
    auto cp = truths(r.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    static const std::regex region(R"((\s*)Parallel region at level (\d+): team size (\d+), (.*))");
    std::vector<std::tuple<std::size_t, std::string, std::string, std::string>> regions;
    int threads_listed = 0;
    for (const auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_match(l, m, region)) {
            regions.emplace_back(m[1].length(), m[2], m[3], m[4]);
        } else if (l.find("  thread ") != std::string::npos && l.find(": LWP ") != std::string::npos) {
            ++threads_listed;
        }
    }
    // One outer region (level 1, team 2) holding two inner regions (level 2, team 3).
    REQUIRE(regions.size() == 3);
    CHECK(std::get<0>(regions[0]) == 0);
    CHECK(std::get<1>(regions[0]) == "1");
    CHECK(std::get<2>(regions[0]) == cp[0]["outer_team_size"]);
    for (int i : {1, 2}) {
        CHECK(std::get<0>(regions[i]) == 2);
        CHECK(std::get<1>(regions[i]) == cp[0]["level"]);
        CHECK(std::get<2>(regions[i]) == cp[0]["team_size"]);
        CHECK_THAT(std::get<3>(regions[i]), Catch::Contains("omp_nested.c:"));
    }
    CHECK(threads_listed == 2 + 3 + 3);
}

TEST_CASE("omp icvs shows the ICVs the program set and printed", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_icvs"), {"break omp_checkpoint", "run", "omp icvs"},
                       run_options().timeout_after(90s).set_env("OMP_SCHEDULE", "dynamic,4"));
    INFO(r.all());
    REQUIRE(r.ok());
    auto t = truths(r.out, "max_threads");
    REQUIRE(t.size() == 1);
    auto cp = truths(r.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    auto icvs = icv_rows(r.out);
    CHECK(icvs["max-active-levels-var"] == t[0]["max_active_levels"]);
    CHECK(icvs["dyn-var"] == t[0]["dynamic"]);
    CHECK(icvs["num-procs-var"] == t[0]["num_procs"]);
    CHECK(icvs["thread-limit-var"] == t[0]["thread_limit"]);
    CHECK(icvs["team-size-var"] == cp[0]["team_size"]);
    CHECK(icvs["levels-var"] == cp[0]["level"]);
    // omp_sched_dynamic is 2; OMP_SCHEDULE=dynamic,4.
    CHECK(t[0]["schedule_kind"] == "2");
    CHECK(icvs["run-sched-var"] == "dynamic," + t[0]["schedule_chunk"]);
    CHECK(icvs["thread-num-var"] == "0");
    CHECK(icvs["debug-var"] == "1");
}

TEST_CASE("omp tasks at the deepest task shows its chain of explicit tasks down from the implicit one",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_tasks"), {"break omp_checkpoint", "run", "omp tasks"});
    INFO(r.all());
    REQUIRE(r.ok());
    auto cp = truths(r.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    int depth = std::stoi(cp[0]["depth"]);
    // The running task and its generating ancestors: one explicit task per depth.
    int explicit_running = 0, explicit_total = 0, implicit = 0;
    for (const auto& l : lines_of(r.out)) {
        if (l.rfind("Task ", 0) != 0) {
            continue;
        }
        if (l.find(": explicit") != std::string::npos) {
            ++explicit_total;
            CHECK_THAT(l, Catch::Contains("omp_tasks.c:"));
            if (l.find("thread ") != std::string::npos) {
                ++explicit_running;
            }
        } else if (l.find(": implicit") != std::string::npos) {
            ++implicit;
        }
    }
    CHECK(explicit_total >= depth);
    CHECK(explicit_running >= 1);
    CHECK(implicit >= 1);
}

TEST_CASE("omp threads shows the threads waiting for an OpenMP lock", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_locks"), {"break omp_checkpoint", "run", "omp threads"});
    INFO(r.all());
    REQUIRE(r.ok());
    auto cp = truths(r.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    auto rows = thread_rows(r.out);
    REQUIRE(rows.size() == std::stoul(cp[0]["team_size"]));
    int waiting = 0;
    for (const auto& row : rows) {
        waiting += row.state == "ompt_state_wait_lock";
    }
    CHECK(waiting == std::stoi(cp[0]["waiters"]));
}

TEST_CASE("omp commands say why a GNU libgomp program cannot be inspected", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested_libgomp"), {"break omp_checkpoint", "run", "omp threads"});
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.err, Catch::Contains("GNU libgomp"));
    CHECK_THAT(r.err, Catch::Contains("no OMPD support"));
}

TEST_CASE("omp commands name the runtime file that lacks the OMPD symbols", "[ompd][e2e]") {
    if (!fs::exists(omp_example("omp_nested_debian_libomp"))) {
        WARN("skipped: no Debian libomp variant");
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested_debian_libomp"), {"break omp_checkpoint", "run", "omp info"});
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.err, Catch::Contains("/usr/lib/llvm-19/lib/libomp.so.5 has no OMPD support"));
    CHECK_THAT(r.err, Catch::Contains("ompd_dll_locations"));
}

TEST_CASE("omp info shows the OMPD library the runtime named and its versions", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested"), {"break omp_checkpoint", "run", "omp info"});
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK_THAT(r.out, Catch::Contains("OMPD library:        " + fs::canonical(omp_runtime_dir + "/libompd.so").string()));
    CHECK_THAT(r.out, Catch::Contains("OMPD API version:    "));
    CHECK_THAT(r.out, Catch::Contains("LLVM OpenMP"));
}

TEST_CASE("omp threads on an attached program stuck in a barrier shows the waiting team", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    background_process prog({omp_example("omp_barrier_stuck")},
                            run_options().set_env("OMP_DEBUG", "enabled"));
    auto stuck = prog.wait_for_line(std::regex("truth: stuck team_size=(\\d+)"), 30s);
    REQUIRE(stuck);
    auto r = ompdbg_batch({"-ex", "omp threads", "-ex", "omp parallel", "attach", std::to_string(prog.pid())},
                          run_options().timeout_after(90s));
    INFO(r.all());
    REQUIRE(r.ok());
    auto rows = thread_rows(r.out);
    REQUIRE(rows.size() == 4);
    int in_barrier = 0;
    for (const auto& row : rows) {
        CHECK(row.is_openmp);
        CHECK(row.team == "4");
        in_barrier += row.state.find("wait_barrier") != std::string::npos;
    }
    // Threads 0-2 wait in the barrier; thread 3 never reaches it.
    CHECK(in_barrier == 3);
    CHECK_THAT(r.out, Catch::Contains("Parallel region at level 1: team size 4"));
    // Detached, the program still runs (it is killed by the test's destructor).
    CHECK(prog.running());
}

TEST_CASE("omp threads on a program attached without OMP_DEBUG says how to fix it", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    background_process prog({omp_example("omp_barrier_stuck")});
    REQUIRE(prog.wait_for_line(std::regex("truth: stuck"), 30s));
    auto r = ompdbg_batch({"-ex", "omp threads", "attach", std::to_string(prog.pid())},
                          run_options().timeout_after(90s));
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.err, Catch::Contains("OMP_DEBUG=enabled"));
}

TEST_CASE("ompdbg run sets OMP_DEBUG=enabled for the program", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    // The test's environment has no OMP_DEBUG; the runtime only fills ompd_state with it.
    auto r = ompdbg_on(omp_example("omp_icvs"), {"break omp_checkpoint", "run", "omp icvs address-space"});
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK(icv_rows(r.out)["debug-var"] == "1");
}

TEST_CASE("catch omp reports each parallel region and task once, as many as the program ran", "[ompd][e2e][!mayfail]") {
    if (!have_omp_examples()) {
        return;
    }
    fs::path script = fs::temp_directory_path() / ("ompdbg-catch-" + std::to_string(::getpid()) + ".gdb");
    {
        std::ofstream f(script);
        f << "catch omp parallel-begin\ncommands\ncontinue\nend\n"
             "catch omp parallel-end\ncommands\ncontinue\nend\n"
             "catch omp task-begin\ncommands\ncontinue\nend\n"
             "run\n";
    }
    auto r = ompdbg_batch({"-x", script.string(), omp_example("omp_events")}, run_options().timeout_after(120s));
    fs::remove(script);
    INFO(r.all());
    auto t = truths(r.out, "");
    REQUIRE(t.size() == 1);
    int begins = 0, ends = 0, tasks = 0;
    std::multiset<std::string> team_sizes;
    static const std::regex team(R"(team size (\d+))");
    for (const auto& l : lines_of(r.out)) {
        std::smatch m;
        if (l.find("(omp parallel-begin), parallel region") != std::string::npos) {
            ++begins;
            if (std::regex_search(l, m, team)) {
                team_sizes.insert(m[1]);
            }
            CHECK_THAT(l, Catch::Contains("omp_events.c:"));
        } else if (l.find("(omp parallel-end), parallel region") != std::string::npos) {
            ++ends;
        } else if (l.find("(omp task-begin), explicit task") != std::string::npos) {
            ++tasks;
        }
    }
    CHECK(begins == std::stoi(t[0]["parallel_regions"]));
    CHECK(ends == std::stoi(t[0]["parallel_regions"]));
    CHECK(tasks == std::stoi(t[0]["tasks"]));
    // Teams of 2, 3, then three inner teams of 2, then 2 (omp_events.c).
    CHECK(team_sizes == std::multiset<std::string>{"2", "3", "2", "2", "2", "2"});
}
