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

#include <stdlib.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "omp_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::omp;
namespace fs = std::filesystem;

TEST_CASE("omp threads at the nested checkpoint shows every thread at the level and team size it printed",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested"), {"break omp_checkpoint", "run", "omp threads"});
    INFO(r.all());
    REQUIRE(r.ok());
    auto inner = truths(r.out, "thread");
    REQUIRE(inner.size() == 6);
    auto cp = truths(r.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    // The program guarantees the place of every thread: the 5 others are counted inside
    // wait_for_release() before the checkpoint thread goes on.
    REQUIRE(cp[0]["waiting"] == "5");
    auto rows = thread_rows(r.out);
    // 6 OS threads: the initial thread, the outer worker, and two inner workers per team.
    REQUIRE(rows.size() == 6);
    std::multiset<std::string> nums;
    for (const auto& row : rows) {
        CHECK(row.is_openmp);
        CHECK(row.level == inner[0]["level"]);
        CHECK(row.team == inner[0]["team_size"]);
        // All of them run user code of the inner region (the checkpoint, or the wait loop).
        CHECK(row.state == "ompt_state_work_parallel");
        nums.insert(row.omp_num);
    }
    // Inner thread numbers 0..2, each twice (two inner teams).
    CHECK(nums == std::multiset<std::string>{"0", "0", "1", "1", "2", "2"});
    auto selected = std::find_if(rows.begin(), rows.end(), [](const auto& row) { return row.selected; });
    REQUIRE(selected != rows.end());
    CHECK(selected->omp_num == "0");
}

TEST_CASE("omp parallel shows the nesting and the team sizes the program printed", "[ompd][e2e]") {
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
    // The outer region and the inner ones are the constructs at their source lines.
    CHECK_THAT(std::get<3>(regions[0]), Catch::EndsWith(" at " + example_location("openmp/omp_nested.c", "nested-outer")));
    for (int i : {1, 2}) {
        CHECK_THAT(std::get<3>(regions[i]), Catch::EndsWith(" at " + example_location("openmp/omp_nested.c", "nested-inner")));
    }
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

// Since DMPL (issue 5), `omp threads` on libgomp answers from the DMPL library and says on
// stdout what OMPD would add; an OMPD-only command (`omp icvs`) still fails with the reason.
TEST_CASE("omp commands say why a GNU libgomp program cannot be inspected", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested_libgomp"), {"break omp_checkpoint", "run", "omp threads", "omp icvs"});
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.out, Catch::Contains("libgomp has no OMPD support"));
    CHECK_THAT(r.out, Catch::Contains("DMPL library for libgomp"));
    CHECK_THAT(r.err, Catch::Contains("GNU libgomp"));
    CHECK_THAT(r.err, Catch::Contains("no OMPD support"));
    CHECK_THAT(r.err, Catch::Contains("DMPL"));
    CHECK_THAT(r.err, Catch::Contains("command 'omp icvs' failed"));
}

// `omp info` shows the DMPL library and, on its OMPD line, why OMPD is not available; an
// OMPD-only command fails with the same reason.
TEST_CASE("omp commands name the runtime file that lacks the OMPD symbols", "[ompd][e2e]") {
    if (!fs::exists(omp_example("omp_nested_debian_libomp"))) {
        WARN("skipped: no Debian libomp variant");
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested_debian_libomp"), {"break omp_checkpoint", "run", "omp info", "omp icvs"});
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.out, Catch::Contains("OMPD:                not available: /usr/lib/llvm-19/lib/libomp.so.5 has no "
                                      "OMPD support: it lacks the symbol ompd_dll_locations"));
    CHECK_THAT(r.err, Catch::Contains("/usr/lib/llvm-19/lib/libomp.so.5 has no OMPD support"));
    CHECK_THAT(r.err, Catch::Contains("ompd_dll_locations"));
    CHECK_THAT(r.err, Catch::Contains("command 'omp icvs' failed"));
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

TEST_CASE("the debugger loads libompd when the runtime passes ompd_dll_locations_valid", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    // Before the runtime initialises, nothing is loaded; by the checkpoint the library the
    // runtime named was loaded once, at its ompd_dll_locations_valid.
    auto r = ompdbg_on(omp_example("omp_icvs"), {"break main", "run", "omp info", "break omp_checkpoint",
                                                  "continue", "omp info", "info breakpoints"});
    INFO(r.all());
    const std::string lib = fs::canonical(omp_runtime_dir + "/libompd.so").string();
    auto out = lines_of(r.out);
    int loaded = 0;
    std::size_t loaded_at = 0, main_at = 0, checkpoint_at = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i].find("[OMPD library " + lib) != std::string::npos) {
            ++loaded;
            loaded_at = i;
            CHECK_THAT(out[i], Catch::Contains("named by the runtime (ompd_dll_locations)"));
        }
        if (out[i].find("Breakpoint 1, main") != std::string::npos) {
            main_at = i;
        }
        if (out[i].find("Breakpoint 2, omp_checkpoint") != std::string::npos) {
            checkpoint_at = i;
        }
    }
    CHECK(loaded == 1);
    CHECK(main_at < loaded_at);
    CHECK(loaded_at < checkpoint_at);
    // At main the runtime has not run yet: omp info says so on its OMPD line (the DMPL
    // part of omp info answers already).
    CHECK(std::regex_search(r.out, std::regex("OMPD: +not available: the OpenMP runtime \\S+/libomp\\.so is not "
                                              "initialised yet")));
    CHECK_THAT(r.out, Catch::Contains("OMPD library:        " + lib));
    CHECK_THAT(r.out, Catch::Contains("Found:               named by the runtime (ompd_dll_locations)"));
    // The internal breakpoint is not a user breakpoint.
    CHECK(r.out.find("ompd_dll_locations_valid") == std::string::npos);
}

namespace {

/// A private copy of the OMPD-enabled libomp in a fresh directory without libompd.so next to
/// it: a program run with LD_LIBRARY_PATH there (which comes before its RUNPATH) uses a
/// runtime whose ompd_dll_locations names a library that cannot be found.
struct runtime_without_libompd {
    fs::path dir;
    runtime_without_libompd() {
        char tmpl[] = "/tmp/ompdbg-runtime-XXXXXX";
        dir = ::mkdtemp(tmpl);
        fs::copy_file(omp_runtime_dir + "/libomp.so", dir / "libomp.so");
    }
    ~runtime_without_libompd() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    run_options options() const {
        return run_options().timeout_after(90s).set_env("LD_LIBRARY_PATH", dir.string());
    }
};

std::string fake_ompd(const std::string& variant) {
    return std::string(targets_dir) + "/plugins/libfake_ompd_" + variant + ".so";
}

}  // namespace

TEST_CASE("a runtime naming a libompd that is not there: the debugger says so and how to name one",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    runtime_without_libompd rt;
    auto r = ompdbg_batch({"-ex", "break omp_checkpoint", "-ex", "run", "-ex", "info sharedlibrary", "-ex",
                           "omp threads", omp_example("omp_icvs")},
                          rt.options());
    INFO(r.all());
    // Ground truth: the program really runs on the private copy.
    CHECK_THAT(r.out, Catch::Contains((rt.dir / "libomp.so").string()));
    CHECK_THAT(r.err, Catch::Contains("warning: OMPD: no OMPD library found (the runtime names libompd.so"));
    CHECK_THAT(r.err, Catch::Contains("'set ompd-library PATH' or --ompd-library PATH"));
    CHECK_FALSE(r.ok());
}

TEST_CASE("the option --ompd-library is the fallback when the runtime's libompd cannot be loaded", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    runtime_without_libompd rt;
    const std::string lib = fs::canonical(omp_runtime_dir + "/libompd.so").string();
    auto r = ompdbg_batch({"--ompd-library", lib, "-ex", "break omp_checkpoint", "-ex", "run", "-ex", "omp info",
                           "-ex", "omp icvs thread", omp_example("omp_icvs")},
                          rt.options());
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK_THAT(r.out, Catch::Contains("OMPD library:        " + lib));
    CHECK_THAT(r.out, Catch::Contains("Found:               set ompd-library / --ompd-library"));
    CHECK(icv_rows(r.out)["thread-num-var"] == "0");
}

TEST_CASE("a libompd of another OMPD API version is refused with both versions named", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    runtime_without_libompd rt;
    auto r = ompdbg_batch({"--ompd-library", fake_ompd("old_api"), "-ex", "break omp_checkpoint", "-ex", "run",
                           "-ex", "omp threads", omp_example("omp_icvs")},
                          rt.options());
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.err, Catch::Contains("libfake_ompd_old_api.so: OMPD API version 199901 is not supported "
                                      "(ompdbg implements 201811 to 202111"));
}

TEST_CASE("an ompd_rc_t error from the plugin is shown by its name", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    runtime_without_libompd rt;
    // The fake answers ompd_rc_unsupported (5) from ompd_initialize.
    auto r = ompdbg_batch({"--ompd-library", fake_ompd("init_error"), "-ex", "break omp_checkpoint", "-ex", "run",
                           "-ex", "omp threads", omp_example("omp_icvs")},
                          rt.options());
    INFO(r.all());
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.err, Catch::Contains("libfake_ompd_init_error.so: ompd_initialize failed: ompd_rc_unsupported"));
}

TEST_CASE("omp bt folds the runtime away and names each region's construct, continued to main",
          "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_on(omp_example("omp_nested"),
                       {"break omp_checkpoint", "run", "thread apply all omp bt continued"});
    INFO(r.all());
    REQUIRE(r.ok());
    const std::string outer = "#pragma omp parallel at " + example_location("openmp/omp_nested.c", "nested-outer");
    const std::string inner = "#pragma omp parallel at " + example_location("openmp/omp_nested.c", "nested-inner");
    // One block per thread: "Thread N (...):" then its frames; a separator line starts
    // the frames of the thread that encountered the construct (`segment` counts them).
    std::vector<std::vector<std::string>> blocks;
    std::vector<std::vector<int>> segments;
    for (const auto& l : lines_of(r.out)) {
        if (l.rfind("Thread ", 0) == 0 && l.find("(LWP ") != std::string::npos) {
            blocks.emplace_back();
            segments.emplace_back();
        } else if (!blocks.empty() && l.rfind("---- continued in thread ", 0) == 0) {
            segments.back().push_back(static_cast<int>(blocks.back().size()));
        } else if (!blocks.empty() && l.rfind("#", 0) == 0) {
            blocks.back().push_back(l);
        }
    }
    REQUIRE(blocks.size() == 6);
    static const std::regex frame_number(R"(^#(\d+)\s)");
    int at_checkpoint = 0;
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
        const auto& b = blocks[bi];
        CAPTURE(b);
        REQUIRE_FALSE(b.empty());
        int inner_frames = 0, outer_frames = 0;
        long previous = -1;
        for (std::size_t i = 0; i < b.size(); ++i) {
            std::smatch m;
            REQUIRE(std::regex_search(b[i], m, frame_number));
            // Each frame has its number in its own thread's stack (what `frame N` selects
            // there): increasing, with gaps where the runtime's frames were folded, and
            // from that thread's own numbers again after a separator.
            if (std::count(segments[bi].begin(), segments[bi].end(), static_cast<int>(i)) != 0) {
                previous = -1;
            }
            CHECK(std::stol(m[1]) > previous);
            previous = std::stol(m[1]);
            CHECK(b[i].find("__kmp") == std::string::npos);  // runtime frames folded away
            inner_frames += b[i].find(inner) != std::string::npos;
            outer_frames += b[i].find(outer) != std::string::npos;
        }
        // Every thread's stack, continued into the threads that encountered the constructs,
        // goes from its inner region through the outer one to main.
        CHECK(inner_frames == 1);
        CHECK(outer_frames == 1);
        CHECK_THAT(b.back(), Catch::Contains(" main ") || Catch::Contains(" main("));
        std::size_t inner_at = 0, outer_at = 0;
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (b[i].find(inner) != std::string::npos) {
                inner_at = i;
            }
            if (b[i].find(outer) != std::string::npos) {
                outer_at = i;
            }
        }
        CHECK(inner_at < outer_at);
        if (b[0].find("omp_checkpoint") != std::string::npos) {
            ++at_checkpoint;
        } else {
            // The others wait in wait_for_release (maybe inside the sched_yield it calls).
            bool waiting = b[0].find("wait_for_release") != std::string::npos ||
                           (b.size() > 1 && b[1].find("wait_for_release") != std::string::npos);
            CHECK(waiting);
        }
    }
    CHECK(at_checkpoint == 1);
    CHECK_THAT(r.out, Catch::Contains("---- continued in thread "));
}

TEST_CASE("every omp command answers one JSON object with its result", "[ompd][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = ompdbg_batch({"--json", "-ex", "break omp_checkpoint", "-ex", "run", "-ex", "omp info", "-ex",
                           "omp threads", "-ex", "omp parallel", "-ex", "omp tasks", "-ex", "omp icvs", "-ex",
                           "omp bt", "-ex", "omp devices", "-ex", "catch omp task-end if team_size > 1",
                           omp_example("omp_nested")},
                          run_options().timeout_after(90s));
    INFO(r.all());
    REQUIRE(r.ok());
    std::map<std::string, std::vector<nlohmann::json>> by_command;
    for (const auto& l : lines_of(r.out)) {
        if (l.empty() || l.front() != '{') {
            continue;  // the program's own output
        }
        auto j = nlohmann::json::parse(l, nullptr, false);
        REQUIRE_FALSE(j.is_discarded());
        if (j.value("type", "") == "command") {
            by_command[j.value("command", "")].push_back(j);
        }
    }
    auto result = [&](const std::string& cmd) {
        REQUIRE(by_command[cmd].size() == 1);
        const auto& j = by_command[cmd].front();
        CHECK(j.value("ok", false));
        return j.contains("result") ? j["result"] : j;
    };
    auto info = result("omp info");
    CHECK(info["library"] == fs::canonical(omp_runtime_dir + "/libompd.so").string());
    CHECK(info["api_version"].is_number());
    auto threads_result = result("omp threads");
    auto threads = threads_result["threads"];
    REQUIRE(threads.size() == 6);
    for (const auto& t : threads) {
        CHECK(t["openmp"] == true);
        CHECK(t["team_size"] == 3);
        CHECK(t["level"] == 2);
    }
    auto regions = result("omp parallel")["regions"];
    REQUIRE(regions.size() == 1);
    CHECK(regions[0]["team_size"] == 2);
    CHECK(regions[0]["regions"].size() == 2);
    CHECK(result("omp tasks")["tasks"].size() >= 1);
    bool found_team = false;
    auto icvs = result("omp icvs");
    for (const auto& icv : icvs["icvs"]) {
        if (icv["name"] == "team-size-var") {
            CHECK(icv["value"] == 3);
            found_team = true;
        }
    }
    CHECK(found_team);
    auto frames = result("omp bt")["frames"];
    REQUIRE(frames.size() >= 3);
    CHECK(frames[0]["function"] == "omp_checkpoint");
    int constructs = 0;
    for (const auto& f : frames) {
        constructs += f.value("construct", "") == "#pragma omp parallel";
    }
    CHECK(constructs == 2);
    // The bootstrap's runtime is host-only: it defines no ompd_bp_device_begin (readelf).
    auto devices = result("omp devices");
    REQUIRE(devices["devices"].size() == 1);
    CHECK(devices["devices"][0]["number"] == 0);
    CHECK(devices["devices"][0]["kind"] == "host");
    auto syms = run({"readelf", "-Ws", fs::canonical(omp_runtime_dir + "/libomp.so").string()});
    REQUIRE(syms.exit_code == 0);
    CHECK(devices["offload_devices_announced"] == (syms.out.find(" ompd_bp_device_begin") != std::string::npos));
    auto cp = result("catch omp task-end if team_size > 1")["catchpoint"];
    CHECK(cp["event"] == "task-end");
    CHECK(cp["condition"] == "team_size > 1");
}

TEST_CASE("omp threads and omp parallel on a core of the nested program", "[ompd][e2e][core]") {
    if (!have_omp_examples()) {
        return;
    }
    // The core is written by gdb's gcore at the same checkpoint (OMPD only reads memory, so
    // a core is all it needs); the program's truth lines come from that run.
    char tmpl[] = "/tmp/ompdbg-ompd-core-XXXXXX";
    fs::path dir = ::mkdtemp(tmpl);
    struct cleanup {
        fs::path d;
        ~cleanup() {
            std::error_code ec;
            fs::remove_all(d, ec);
        }
    } remove_dir{dir};
    fs::path core = dir / "core";
    auto g = gdb_batch({"-ex", "break omp_checkpoint", "-ex", "run", "-ex", "gcore " + core.string(),
                        omp_example("omp_nested")},
                       run_options().timeout_after(120s).set_env("OMP_DEBUG", "enabled"));
    INFO(g.all());
    REQUIRE(fs::exists(core));
    auto cp = truths(g.out, "checkpoint");
    REQUIRE(cp.size() == 1);
    auto r = ompdbg_batch({"-ex", "omp threads", "-ex", "omp parallel", "core", omp_example("omp_nested"),
                           core.string()},
                          run_options().timeout_after(120s));
    INFO(r.all());
    REQUIRE(r.ok());
    auto rows = thread_rows(r.out);
    REQUIRE(rows.size() == 6);
    for (const auto& row : rows) {
        CHECK(row.is_openmp);
        CHECK(row.level == cp[0]["level"]);
        CHECK(row.team == cp[0]["team_size"]);
        CHECK(row.state == "ompt_state_work_parallel");
    }
    CHECK_THAT(r.out, Catch::Contains("Parallel region at level 1: team size " + cp[0]["outer_team_size"]));
}
