// `catch omp` end to end on the examples/openmp programs: every parallel region and task
// reported once, conditions over the event's fields (level, team size, task flags), silent
// counting catchpoints, and the errors of a condition.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "omp_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::omp;
namespace fs = std::filesystem;

TEST_CASE("catch omp reports each parallel region and task once, as many as the program ran", "[ompd][e2e]") {
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

namespace {

/// Runs `program` (omp_events unless told) with catchpoints from a script (each catchpoint
/// continues), then the commands `after_run`, and counts the reported hits by kind.
struct catch_counts {
    run_result r;
    std::map<std::string, std::string> truth;
    int parallel_begins = 0, parallel_ends = 0, explicit_tasks = 0, implicit_tasks = 0;
    std::vector<std::string> begin_lines;
    std::multiset<std::string> team_sizes;   ///< "team size N" of each parallel-begin line
};

catch_counts run_catch_script(const std::string& catches, run_options opts = run_options(),
                              const std::string& program = "omp_events", const std::string& after_run = "") {
    fs::path script = fs::temp_directory_path() / ("ompdbg-catch-" + std::to_string(::getpid()) + ".gdb");
    {
        std::ofstream f(script);
        f << catches << "run\n" << after_run;
    }
    catch_counts c;
    c.r = ompdbg_batch({"-x", script.string(), omp_example(program)}, opts.timeout_after(120s));
    fs::remove(script);
    auto t = truths(c.r.out, "");
    if (t.size() == 1) {
        c.truth = t[0];
    }
    for (const auto& l : lines_of(c.r.out)) {
        if (l.find("(omp parallel-begin), parallel region") != std::string::npos) {
            ++c.parallel_begins;
            c.begin_lines.push_back(l);
            static const std::regex team(R"(team size (\d+))");
            std::smatch m;
            if (std::regex_search(l, m, team)) {
                c.team_sizes.insert(m[1]);
            }
        } else if (l.find("(omp parallel-end), parallel region") != std::string::npos) {
            ++c.parallel_ends;
        } else if (l.find("(omp task-begin), explicit task") != std::string::npos) {
            ++c.explicit_tasks;
        } else if (l.find("(omp task-begin), implicit task") != std::string::npos) {
            ++c.implicit_tasks;
        }
    }
    return c;
}

/// A copy of the OMPD-enabled runtime stripped of its debug information (a release build)
/// in a fresh directory, with its libompd.so: .symtab with the ompd_* symbols stays,
/// __kmp_fork_call's local `team` is gone. Removed with the object.
struct stripped_runtime {
    fs::path dir = fs::temp_directory_path() / ("ompdbg-nodwarf-" + std::to_string(::getpid()));
    stripped_runtime() {
        fs::create_directories(dir);
        fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
        fs::copy_file(omp_runtime_dir + "/libomp.so", dir / "libomp.so", fs::copy_options::overwrite_existing);
        fs::copy_file(omp_runtime_dir + "/libompd.so", dir / "libompd.so", fs::copy_options::overwrite_existing);
        auto strip = run({"objcopy", "--strip-debug", (dir / "libomp.so").string()});
        REQUIRE(strip.ok());
        auto sections = run({"readelf", "-S", "-W", (dir / "libomp.so").string()});
        REQUIRE(sections.ok());
        REQUIRE(sections.out.find(".debug_info") == std::string::npos);
        auto symbols = run({"readelf", "-s", "-W", (dir / "libomp.so").string()});
        REQUIRE(symbols.out.find("ompd_access__kmp_base_team_t__t_nproc") != std::string::npos);
    }
    ~stripped_runtime() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    stripped_runtime(const stripped_runtime&) = delete;
    stripped_runtime& operator=(const stripped_runtime&) = delete;
};

}  // namespace

// Silent counting catchpoints go on without stopping the rest of the team (the hit is
// decided with its thread alone): every region and task is still counted once.
TEST_CASE("silent counting catch omp catchpoints count each parallel region and task once", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto c = run_catch_script("catch omp parallel-begin\ncommands\nsilent\ncontinue\nend\n"
                              "catch omp task-begin\ncommands\nsilent\ncontinue\nend\n",
                              run_options(), "omp_events", "info breakpoints\n");
    INFO(c.r.all());
    REQUIRE_FALSE(c.truth.empty());
    CHECK(c.parallel_begins == 0);
    std::vector<std::string> counts;
    for (const auto& l : lines_of(c.r.out)) {
        if (l.rfind("\tcatchpoint already hit ", 0) == 0) {
            counts.push_back(l);
        }
    }
    REQUIRE(counts.size() == 2);
    CHECK(counts[0] == "\tcatchpoint already hit " + c.truth["parallel_regions"] + " times");
    CHECK(counts[1] == "\tcatchpoint already hit " + c.truth["tasks"] + " times");
    CHECK(c.r.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("catch omp parallel-begin if level == 2 stops at the inner regions only", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto c = run_catch_script("catch omp parallel-begin if level == 2\ncommands\ncontinue\nend\n");
    INFO(c.r.all());
    REQUIRE(c.truth.count("level2_regions") == 1);
    CHECK(c.parallel_begins == std::stoi(c.truth["level2_regions"]));
    for (const auto& l : c.begin_lines) {
        CHECK_THAT(l, Catch::Contains("parallel region at level 2:"));
    }
}

TEST_CASE("catch omp parallel-begin if team_size != 2 stops at the team of 3 only", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto c = run_catch_script("catch omp parallel-begin if team_size != 2\ncommands\ncontinue\nend\n");
    INFO(c.r.all());
    REQUIRE(c.truth.count("not_team2_regions") == 1);
    CHECK(c.parallel_begins == std::stoi(c.truth["not_team2_regions"]));
    for (const auto& l : c.begin_lines) {
        CHECK_THAT(l, Catch::Contains("team size 3"));
    }
}

TEST_CASE("catch omp parallel-begin on a runtime without DWARF: team sizes from the runtime's OMPD layout",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    stripped_runtime stripped;
    const fs::path& dir = stripped.dir;
    auto c = run_catch_script("catch omp parallel-begin\ncommands\ncontinue\nend\n",
                              run_options().set_env("LD_LIBRARY_PATH", dir.string()));
    INFO(c.r.all());
    // The stripped copy ran: the OMPD library was found next to it.
    CHECK_THAT(c.r.out, Catch::Contains("[OMPD library " + (dir / "libompd.so").string()));
    REQUIRE(c.truth.count("parallel_regions") == 1);
    CHECK(c.parallel_begins == std::stoi(c.truth["parallel_regions"]));
    // Teams of 2, 3, then three inner teams of 2, then 2 (omp_events.c), at their levels.
    CHECK(c.team_sizes == std::multiset<std::string>{"2", "3", "2", "2", "2", "2"});
    int level2 = 0;
    for (const auto& l : c.begin_lines) {
        CHECK_THAT(l, Catch::Contains("omp_events.c:"));
        level2 += l.find("parallel region at level 2:") != std::string::npos;
    }
    CHECK(level2 == std::stoi(c.truth["level2_regions"]));
    CHECK(c.r.out.find("has not made it current yet") == std::string::npos);
    // A condition over the team size works the same.
    auto d = run_catch_script("catch omp parallel-begin if team_size != 2\ncommands\ncontinue\nend\n",
                              run_options().set_env("LD_LIBRARY_PATH", dir.string()));
    INFO(d.r.all());
    CHECK(d.parallel_begins == std::stoi(c.truth["not_team2_regions"]));
    CHECK(d.team_sizes == std::multiset<std::string>{"3"});
}

TEST_CASE("catch omp parallel-begin tells sibling teams of different sizes apart, with and without the "
          "runtime's DWARF",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    stripped_runtime stripped;
    for (bool with_dwarf : {true, false}) {
        INFO((with_dwarf ? "runtime with DWARF" : "runtime stripped of DWARF"));
        run_options opts;
        if (!with_dwarf) {
            opts.set_env("LD_LIBRARY_PATH", stripped.dir.string());
        }
        // Thread i of the outer team of 3 forks teams of i + 2, three times over, while its
        // siblings fork theirs: every inner region is reported with its own team's size.
        auto c = run_catch_script("catch omp parallel-begin\ncommands\ncontinue\nend\n", opts, "omp_sibling_teams");
        INFO(c.r.all());
        REQUIRE(c.truth.count("inner_regions") == 1);
        REQUIRE(c.truth["mismatches"] == "0");
        if (!with_dwarf) {
            CHECK_THAT(c.r.out, Catch::Contains("[OMPD library " + (stripped.dir / "libompd.so").string()));
        }
        CHECK(c.parallel_begins == std::stoi(c.truth["outer_regions"]) + std::stoi(c.truth["inner_regions"]));
        CHECK(c.team_sizes.count("2") == static_cast<std::size_t>(std::stoi(c.truth["team2"])));
        CHECK(c.team_sizes.count("3") ==
              static_cast<std::size_t>(std::stoi(c.truth["team3"]) + std::stoi(c.truth["outer_regions"])));
        CHECK(c.team_sizes.count("4") == static_cast<std::size_t>(std::stoi(c.truth["team4"])));
        CHECK(c.r.out.find("has not made it current yet") == std::string::npos);
        // Each inner region is the encountering thread's own: its size is that thread's
        // number in the outer team + 2, as the program checks for itself.
        auto d = run_catch_script("catch omp parallel-begin if level == 2 && team_size != thread_num + 2\n"
                                  "commands\ncontinue\nend\n",
                                  opts, "omp_sibling_teams");
        INFO(d.r.all());
        REQUIRE(d.truth.count("inner_regions") == 1);
        CHECK(d.parallel_begins == 0);
        auto e = run_catch_script("catch omp parallel-begin if level == 2 && team_size == thread_num + 2\n"
                                  "commands\ncontinue\nend\n",
                                  opts, "omp_sibling_teams");
        INFO(e.r.all());
        REQUIRE(e.truth.count("inner_regions") == 1);
        CHECK(e.parallel_begins == std::stoi(e.truth["inner_regions"]));
    }
}

TEST_CASE("catch omp task-begin over the task flags and thread number", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    // ompt_task_explicit is 0x4: only the 5 explicit tasks, never an implicit one.
    auto c = run_catch_script("catch omp task-begin if (task_flags & 4) != 0 && thread_num >= 0\n"
                              "commands\ncontinue\nend\n");
    INFO(c.r.all());
    REQUIRE(c.truth.count("tasks") == 1);
    CHECK(c.explicit_tasks == std::stoi(c.truth["tasks"]));
    CHECK(c.implicit_tasks == 0);
    // `implicit` is the same flag as a number.
    auto d = run_catch_script("catch omp task-begin if implicit == 0\ncommands\ncontinue\nend\n");
    INFO(d.r.all());
    CHECK(d.explicit_tasks == std::stoi(c.truth["tasks"]));
    CHECK(d.implicit_tasks == 0);
}

TEST_CASE("catch omp with a condition naming an unknown field says so at the hit", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto c = run_catch_script("catch omp parallel-begin if no_such_field == 1\n");
    INFO(c.r.all());
    // As gdb does for a breakpoint condition that cannot be evaluated: it says why and stops.
    CHECK_THAT(c.r.all(), Catch::Contains("Error in testing condition"));
    CHECK_THAT(c.r.all(), Catch::Contains("No symbol \"no_such_field\" in current context."));
    CHECK(c.parallel_begins == 1);
}

TEST_CASE("catch omp rejects a condition that does not parse", "[ompd][e2e]") {
    auto r = ompdbg_batch({"-ex", "catch omp parallel-begin if team_size !=", "-ex", "info breakpoints"},
                          run_options().timeout_after(30s));
    INFO(r.all());
    CHECK_THAT(r.err, Catch::Contains("syntax error"));
    CHECK_THAT(r.out, Catch::Contains("No breakpoints or watchpoints."));
}
