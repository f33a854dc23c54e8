// `catch omp ...` evaluated by ompdbg's agent at the runtime's ompd_bp_* functions (issue
// 21): a condition over the event's fields and silent counting catchpoints cost no stop
// where they are false or only count. Ground truth is the program's own: omp_events counts
// its regions by level and team size and its tasks (examples/openmp/omp_events.c).

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "omp_common.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::omp;

namespace {

/// `ompdbg --batch` with `cmds` on omp_events, stopping at its last checkpoint.
run_result events_run(const std::vector<std::string>& cmds, run_options opts = run_options()) {
    auto all = ex_args(cmds);
    all.push_back(omp_example("omp_events"));
    return ompdbg_batch(all, opts.timeout_after(120s));
}

std::map<std::string, std::string> truth_of(const run_result& r) {
    auto t = omp::truths(r.out, "");
    REQUIRE(t.size() == 1);
    return t[0];
}

int count_lines(const std::string& out, const std::string& part) {
    int n = 0;
    for (const auto& l : omp::lines_of(out)) {
        n += l.find(part) != std::string::npos;
    }
    return n;
}

}  // namespace

TEST_CASE("catch omp parallel-begin if team_size != 2 is evaluated in the target and stops at the team of 3 only",
          "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = events_run({"set breakpoint fast on", "catch omp parallel-begin if team_size != 2", "commands",
                         "continue", "end", "break omp_checkpoint", "run", "info breakpoints", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto truth = truth_of(r);
    CHECK(truth["not_team2_regions"] == "1");
    CHECK(count_lines(r.out, "(omp parallel-begin), parallel region") == 1);
    CHECK(count_lines(r.out, "team size 3") == 1);
    CHECK(has_line(r.out, "\tstop only if team_size != 2 (target evaluation)"));
    CHECK(has_line(r.out, "\tcatchpoint already hit 1 time"));
}

TEST_CASE("catch omp parallel-begin if level == 2 in the target stops at each inner region", "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = events_run({"set breakpoint fast on", "catch omp parallel-begin if level == 2", "commands", "continue",
                         "end", "break omp_checkpoint", "run", "info breakpoints", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto truth = truth_of(r);
    CHECK(count_lines(r.out, "(omp parallel-begin), parallel region at level 2") == std::stoi(truth["level2_regions"]));
    CHECK(count_lines(r.out, "(omp parallel-begin), parallel region") == std::stoi(truth["level2_regions"]));
    CHECK(has_line(r.out, "\tstop only if level == 2 (target evaluation)"));
    CHECK(has_line(r.out, "\tcatchpoint already hit " + truth["level2_regions"] + " times"));
}

TEST_CASE("catch omp parallel-end conditions on the ending team are evaluated in the target", "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    // One catchpoint: two at one address would both keep the int3.
    auto r = events_run({"set breakpoint fast on", "catch omp parallel-end if team_size == 3 || level == 2",
                         "commands", "continue", "end", "break omp_checkpoint", "run", "info breakpoints",
                         "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto truth = truth_of(r);
    CHECK(count_lines(r.out, "(omp parallel-end), parallel region at level 1: team size 3") ==
          std::stoi(truth["not_team2_regions"]));
    CHECK(count_lines(r.out, "(omp parallel-end), parallel region at level 2") == std::stoi(truth["level2_regions"]));
    CHECK(count_lines(r.out, "(omp parallel-end), ") ==
          std::stoi(truth["not_team2_regions"]) + std::stoi(truth["level2_regions"]));
    CHECK(has_line(r.out, "\tstop only if team_size == 3 || level == 2 (target evaluation)"));
    CHECK(has_line(r.out, "\tcatchpoint already hit 4 times"));
}

TEST_CASE("silent counting catch omp catchpoints are counted in the target with exact counts", "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = events_run({"set breakpoint fast on", "catch omp parallel-begin", "commands", "silent", "continue", "end",
                         "catch omp parallel-end", "commands", "silent", "continue", "end", "catch omp task-begin",
                         "commands", "silent", "continue", "end", "break omp_checkpoint", "run", "info breakpoints",
                         "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto truth = truth_of(r);
    int regions = std::stoi(truth["parallel_regions"]);
    CHECK(regions == 6);
    CHECK(count_lines(r.out, "(omp parallel-begin), ") == 0);
    CHECK(has_line(r.out, "\tcatchpoint already hit " + std::to_string(regions) + " times"));
    CHECK(count_lines(r.out, "\tcatchpoint already hit " + std::to_string(regions) + " times") == 2);
    CHECK(count_lines(r.out, "\thits counted in the target") == 3);
    // task-begin: the explicit tasks (LLVM's libomp passes ompd_bp_task_begin for those
    // only), as without the agent.
    CHECK(has_line(r.out, "\tcatchpoint already hit " + truth["tasks"] + " times"));
}

TEST_CASE("a catch omp condition on a field the agent does not read stays with the debugger and says why",
          "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = events_run({"set breakpoint fast on", "catch omp parallel-begin if thread_num == 0 && team_size == 3",
                         "commands", "continue", "end", "break omp_checkpoint", "run", "info breakpoints", "continue"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(count_lines(r.out, "(omp parallel-begin), parallel region") == 1);
    CHECK(has_line(r.out,
                   "\tstop only if thread_num == 0 && team_size == 3 (host evaluation: an OpenMP event field the "
                   "agent does not read)"));
    CHECK(has_line(r.out, "\tcatchpoint already hit 1 time"));
}

TEST_CASE("catch omp parallel-begin with a condition stops as often with fast breakpoints off", "[e2e][fast][ompd]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = events_run({"catch omp parallel-begin if team_size != 2", "commands", "continue", "end",
                         "break omp_checkpoint", "run", "info breakpoints", "continue"},
                        run_options().set_env("OMPDBG_FAST_BREAKPOINTS", "off"));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(count_lines(r.out, "(omp parallel-begin), parallel region") == 1);
    CHECK(has_line(r.out, "\tstop only if team_size != 2"));
    CHECK(has_line(r.out, "\tcatchpoint already hit 1 time"));
}
