// Memory of a process on another host (issue 18) read from the files here where that is
// safe: the read-only segments (code, read-only data, unwind tables) of a module whose file
// here has the build-id the process maps are read from that file instead of through the
// agent (gdb's `set trust-readonly-sections`, on by default here). What the user sees must
// not change: the same bytes and instructions as gdb shows through the same agent, the same
// with the setting off, and a byte the debugger writes into code is read back from the
// process, never from the file. Each test removes its hosts and processes, also when it fails.
#include <catch2/catch.hpp>

#include <regex>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "remote_counter.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

constexpr auto step_timeout = 60s;

/// The lines of `out` that `x` printed for the bytes or instructions at `symbol` (the same
/// process in every run compared: its addresses are the same).
std::vector<std::string> x_lines(const std::string& out, const std::string& symbol) {
    std::vector<std::string> found;
    for (auto& l : lines_of(out)) {
        if (l.find("<" + symbol) != std::string::npos && l.find("0x") != std::string::npos) {
            found.push_back(l);
        }
    }
    return found;
}

}  // namespace

TEST_CASE("a remote process's code is read from the file here of the same build-id: x shows what gdb shows through "
          "the agent and the same with set trust-readonly-sections off and a byte written into the code is read back "
          "from the process",
          "[cli][remote]") {
    simulated_cluster cluster({"node1"});
    remote_counter prog(cluster, "node1");
    std::string connect = "target extended-remote " + cluster.agent("node1");
    std::vector<std::string> cmds{connect,
                                  "attach " + prog.pid,
                                  "show trust-readonly-sections",
                                  "x/16xb print_counter",
                                  "x/3i pause_a_little",
                                  "set $orig = *(unsigned char *)print_counter",
                                  "set var *(unsigned char *)print_counter = 0x90",
                                  "x/1xb print_counter",
                                  "set var *(unsigned char *)print_counter = $orig",
                                  "set trust-readonly-sections off",
                                  "show trust-readonly-sections",
                                  "x/16xb print_counter",
                                  "x/3i pause_a_little",
                                  "set trust-readonly-sections on",
                                  "bt",
                                  "detach"};
    auto r = ompdbg_batch(ex_args(cmds), cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg stdout:\n" << r.out << "\nompdbg stderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(has_line(r.out, "Mode for reading from readonly sections is on."));
    CHECK(has_line(r.out, "Mode for reading from readonly sections is off."));
    auto bytes = x_lines(r.out, "print_counter");
    auto code = x_lines(r.out, "pause_a_little");
    // Two lines of 8 bytes from the file, the written byte from the process, then the same
    // two lines read through the agent.
    REQUIRE(bytes.size() == 5);
    CHECK(bytes[0] + bytes[1] == bytes[3] + bytes[4]);
    CHECK(std::regex_search(bytes[2], std::regex(R"(<print_counter>:\s+0x90$)")));
    REQUIRE(code.size() == 6);
    CHECK(std::vector(code.begin(), code.begin() + 3) == std::vector(code.begin() + 3, code.end()));
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +0x[0-9a-f]+ in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:\d+)")));
    CHECK(has_line(r.out, "[Inferior 1 (process " + prog.pid + ") detached]"));
    // The first byte was put back: the program runs on.
    prog.check_runs_on();

    // gdb, through the same agent on the same process, reads the same bytes and instructions.
    std::vector<std::string> same{connect, "attach " + prog.pid, "x/16xb print_counter", "x/3i pause_a_little", "detach"};
    auto ours = ompdbg_batch(ex_args(same), cluster.options(run_options().timeout_after(step_timeout)));
    std::vector<std::string> gdb_args{"-ex", "set sysroot /"};
    for (auto& a : ex_args(same)) {
        gdb_args.push_back(a);
    }
    auto theirs = gdb_batch(gdb_args, cluster.options(run_options().timeout_after(step_timeout)));
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE(ours.ok());
    CHECK(x_lines(ours.out, "print_counter").size() == 2);
    CHECK(x_lines(ours.out, "print_counter") == x_lines(theirs.out, "print_counter"));
    CHECK(x_lines(ours.out, "pause_a_little").size() == 3);
    CHECK(x_lines(ours.out, "pause_a_little") == x_lines(theirs.out, "pause_a_little"));
    prog.check_runs_on();
}
