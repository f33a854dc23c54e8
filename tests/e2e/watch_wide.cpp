// Software watchpoints (guarded pages) beyond one machine word, and what else may touch a
// guarded page: a struct or an array watched as a whole, a vfork child writing the guarded
// page. (A read(2) into a watched buffer still fails with EFAULT: not tested, known gap.) Each transcript is compared with gdb's software
// watchpoints (`set can-use-hw-watchpoints 0`) on the same binary; the program's own
// output says what it saw.
#include <catch2/catch.hpp>

#include <regex>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

std::string program() { return example_path("watched_wide"); }

/// The debugger's lines from the first "Watchpoint 2: " on, without the program's output,
/// gdb's vfork note and the process id of the exit line; argv's address differs between
/// the two runs (gdb sets LINES and COLUMNS in the environment).
std::vector<std::string> watch_reports(const std::string& out, const std::vector<std::string>& printed) {
    std::vector<std::string> keep;
    bool on = false;
    for (auto l : debugger_lines(out, printed)) {
        on = on || l.rfind("Watchpoint 2: ", 0) == 0;
        if (!on || l.rfind("[Detaching after vfork", 0) == 0) {
            continue;
        }
        l = std::regex_replace(l, std::regex(R"(\(process \d+\))"), "(process N)");
        keep.push_back(std::regex_replace(l, std::regex("argv=0x[0-9a-f]+"), "argv=..."));
    }
    return keep;
}

struct both {
    run_result ours, gdb;
};

/// `cmds` in ompdbg (software watchpoints: the fallback on machines whose debug registers
/// never trap, forced elsewhere) and in gdb with software watchpoints.
both run_both(const std::vector<std::string>& cmds, const std::vector<std::string>& args) {
    std::vector<std::string> ours_cmds{"set can-use-hw-watchpoints 0"};
    ours_cmds.insert(ours_cmds.end(), cmds.begin(), cmds.end());
    return {ompdbg_cmds(program(), ours_cmds, args), gdb_cmds(program(), ours_cmds, args)};
}

}  // namespace

TEST_CASE("watch: a 32-byte array and a 24-byte struct are watched whole, as gdb's software watchpoints",
          "[cli][watch]") {
    auto printed = program_output(program());
    REQUIRE(printed == std::vector<std::string>{"arr 5 10 box 3"});
    auto r = run_both({"break main", "run", "watch arr", "continue", "continue", "watch box", "continue", "continue"},
                      {});
    CAPTURE(r.ours.all(), r.gdb.all());
    REQUIRE_FALSE(r.ours.timed_out);
    auto gdb_reports = watch_reports(r.gdb.out, printed);
    REQUIRE(std::find(gdb_reports.begin(), gdb_reports.end(), "New value = {10, 0, 0, 0, 0, 5, 0, 0}") !=
            gdb_reports.end());
    CHECK(joined(watch_reports(r.ours.out, printed)) == joined(gdb_reports));
    CHECK(has_line(r.ours.out, "arr 5 10 box 3"));
}

TEST_CASE("watch: a vfork child writing the guarded page is not killed, and the guard is back afterwards",
          "[cli][watch][fork]") {
    auto printed = program_output(program(), {"vfork"});
    REQUIRE(printed == std::vector<std::string>{"vfork child exited 3 beside 1", "watched[1] 1"});
    auto r = run_both({"break main", "run", "watch page.watched", "continue", "continue"}, {"vfork"});
    CAPTURE(r.ours.all(), r.gdb.all());
    REQUIRE_FALSE(r.ours.timed_out);
    CHECK(has_line(r.ours.out, "vfork child exited 3 beside 1"));
    auto gdb_reports = watch_reports(r.gdb.out, printed);
    REQUIRE(std::find(gdb_reports.begin(), gdb_reports.end(), "New value = {0, 1, 0, 0, 0, 0, 0, 0}") !=
            gdb_reports.end());
    CHECK(joined(watch_reports(r.ours.out, printed)) == joined(gdb_reports));
}
