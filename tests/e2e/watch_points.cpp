// Watchpoints end to end: watch, rwatch, awatch, watch -l, scope of locals, threads, real
// faults passing through, bad input. On machines whose debug registers never trap (ours)
// they are software watchpoints; the transcript is then compared with gdb's software
// watchpoints (`set can-use-hw-watchpoints 0`) on the same binary.
#include <catch2/catch.hpp>

#include <chrono>
#include <regex>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

const std::string fallback_note = "Hardware watchpoints do not trigger on this machine";

std::string watched() { return example_path("watched"); }

/// The lines from the first "...atchpoint 2: hot.counter" on (setting it, then the stop
/// reports), without the program's own output and libthread_db chatter.
std::vector<std::string> watch_reports(const std::string& out) {
    std::vector<std::string> keep;
    bool on = false;
    for (auto& l : debugger_lines(out)) {
        on = on || l.find("atchpoint 2: hot.counter") != std::string::npos;
        if (on && l.rfind("counter ", 0) != 0) {
            keep.push_back(l);
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("watch: old and new value and the line that changed it, as gdb reports them", "[cli][watch]") {
    // Two hits: bump() at i == 0 and i == 25000.
    auto r = ompdbg_cmds(watched(), {"break main", "run", "watch hot.counter", "continue", "continue"}, {"30000"});
    INFO(r.all());
    REQUIRE(r.ok());
    bool software = r.out.find(fallback_note) != std::string::npos;
    std::string title = software ? "Watchpoint 2: hot.counter" : "Hardware watchpoint 2: hot.counter";
    CHECK(count_lines_starting(r.out, title) == 3);   // set, then two stops
    CHECK(has_line(r.out, "Old value = 0"));
    CHECK(has_line(r.out, "New value = 1"));
    CHECK(has_line(r.out, "Old value = 1"));
    CHECK(has_line(r.out, "New value = 2"));
    if (software) {
        // gdb's own software watchpoints (it single-steps everything, so one hit in a
        // short run) on the same binary: the same report, frame and line.
        std::vector<std::string> cmds{"break main", "run", "watch hot.counter", "continue"};
        auto ours = ompdbg_cmds(watched(), cmds, {"10"});
        std::vector<std::string> gcmds{"set can-use-hw-watchpoints 0"};
        gcmds.insert(gcmds.end(), cmds.begin(), cmds.end());
        auto g = gdb_cmds(watched(), gcmds, {"10"});
        INFO(ours.all());
        INFO(g.all());
        REQUIRE(watch_reports(g.out).size() >= 6);
        CHECK(joined(watch_reports(ours.out)) == joined(watch_reports(g.out)));
    }
}

TEST_CASE("watch: a loop of 100,000 writes to the watched page runs to the end", "[cli][watch]") {
    auto start = std::chrono::steady_clock::now();
    auto r = ompdbg_batch({"-ex", "break main", "-ex", "run", "-ex", "watch hot.counter", "-ex", "continue", "-ex",
                           "continue", "-ex", "continue", "-ex", "continue", "-ex", "delete", "-ex", "continue",
                           watched()},
                          run_options().timeout_after(100s));
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(r.all());
    INFO("took " << seconds << " s");
    WARN("100,000 iterations with a watchpoint on the page took " << seconds << " s");
    REQUIRE(r.ok());
    for (int v = 1; v <= 4; ++v) {
        CHECK(has_line(r.out, "New value = " + std::to_string(v)));
    }
    // The program itself: 4 bumps, then the thread's 1000; the sum 0+...+99999.
    CHECK(r.out.find("counter 1000 neighbour 4999950000 sink 7 doubled 42") != std::string::npos);
    CHECK(r.out.find("exited normally") != std::string::npos);
}

TEST_CASE("rwatch and awatch report reads and accesses", "[cli][watch]") {
    int read_line = example_line("watched.c", "read");
    auto r = ompdbg_cmds(watched(), {"break " + example_location("watched.c", "read"), "run", "rwatch read_me",
                                     "awatch small", "continue", "continue", "info watchpoints"},
                         {"10"});
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK(r.out.find("ead watchpoint 2: read_me") != std::string::npos);
    CHECK(r.out.find("ccess (read/write) watchpoint 3: small") != std::string::npos);
    CHECK(has_line(r.out, "Value = 7"));
    CHECK(has_line(r.out, "Old value = 97 'a'"));
    CHECK(has_line(r.out, "New value = 98 'b'"));
    CHECK(r.out.find(std::to_string(read_line)) != std::string::npos);
    CHECK(r.out.find("read watchpoint keep y") != std::string::npos);
    CHECK(r.out.find("acc watchpoint  keep y") != std::string::npos);
}

TEST_CASE("watch on a local ends with its frame, as gdb says, watch -l does not", "[cli][watch]") {
    std::vector<std::string> cmds{"break local_scope", "run", "watch local", "continue", "continue", "continue"};
    auto r = ompdbg_cmds(watched(), cmds, {"10"});
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK(has_line(r.out, "New value = 21"));
    CHECK(has_line(r.out, "New value = 42"));
    // From the deletion on, as gdb says it (the stop after the return, in main).
    // (argv's address depends on the environment, which gdb changes: LINES, COLUMNS.)
    auto from_deletion = [](const std::string& out) {
        auto at = out.find("Watchpoint 2 deleted because");
        if (at == std::string::npos) {
            return std::string();
        }
        auto l = lines_of(out.substr(at));
        REQUIRE(l.size() >= 4);
        return std::regex_replace(l[0] + "\n" + l[1] + "\n" + l[2] + "\n" + l[3], std::regex("argv=0x[0-9a-f]+"),
                                  "argv=ADDR");
    };
    std::vector<std::string> gcmds{"set can-use-hw-watchpoints 0"};
    gcmds.insert(gcmds.end(), cmds.begin(), cmds.end());
    auto g = gdb_cmds(watched(), gcmds, {"10"});
    INFO(g.all());
    CHECK(!from_deletion(r.out).empty());
    CHECK(from_deletion(r.out) == from_deletion(g.out));

    auto l = ompdbg_cmds(watched(), {"break main", "run", "watch -l hot.counter", "continue", "info watchpoints"},
                         {"10"});
    INFO(l.all());
    REQUIRE(l.ok());
    CHECK(l.out.find("atchpoint 2: -location hot.counter") != std::string::npos);
    CHECK(has_line(l.out, "New value = 1"));
}

TEST_CASE("watch: a thread created after the watchpoint triggers it", "[cli][watch]") {
    // As gdb, the stop is after the store: on the line that follows it.
    int thread_line = example_line("watched.c", "thread_write") + 1;
    auto r = ompdbg_cmds(watched(), {"break " + example_location("watched.c", "call_local"), "run",
                                     "watch hot.counter", "continue", "bt 1"},
                         {"10"});
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK(has_line(r.out, "Old value = 1"));
    CHECK(has_line(r.out, "New value = 1000"));
    CHECK(r.out.find("[Switching to Thread ") != std::string::npos);
    CHECK(has_line(r.out, source_line("watched.c", thread_line)));
    CHECK(r.out.find("thread_main") != std::string::npos);
}

TEST_CASE("watch: a real SIGSEGV still reaches the program", "[cli][watch]") {
    // Hits: bump() at i == 0, the thread's write, then the crash outside the guarded page.
    auto r = ompdbg_cmds(watched(), {"break main", "run", "watch hot.counter", "continue", "continue", "continue"},
                         {"10", "crash"});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.out.find("received signal SIGSEGV, Segmentation fault.") != std::string::npos);
    CHECK(r.out.find(std::to_string(example_line("watched.c", "crash"))) != std::string::npos);
}

TEST_CASE("watch: bad input gives one clear line", "[cli][watch]") {
    auto r = ompdbg_cmds(watched(), {"break main", "run", "watch 5", "watch $rsp + 8", "watch",
                                     "watch nosuchvar", "rwatch", "rwatch hot.counter + 1"},
                         {"10"});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(has_line(r.err, "Cannot watch constant value `5'."));
    CHECK(has_line(r.err, "Cannot watch `$rsp + 8': it lives in a register, not in memory."));
    CHECK(has_line(r.err, "Expression cannot be implemented with read/access watchpoint."));
    CHECK(count_lines_starting(r.err, "Argument required (expression to compute).") == 2);
    CHECK(has_line(r.err, "No symbol \"nosuchvar\" in current context."));
    auto no_process = ompdbg_cmds(watched(), {"watch hot.counter"});
    CHECK(has_line(no_process.err, "The program is not being run."));
}

TEST_CASE("watch: hardware slots, forced where the debug registers never trap", "[cli][watch]") {
    auto r = ompdbg_batch({"-ex", "break main", "-ex", "run", "-ex", "watch hot.counter", "-ex", "watch read_me",
                           "-ex", "rwatch small", "-ex", "awatch halfword", "-ex", "watch hot.neighbour", "-ex",
                           "delete 3", "-ex", "watch hot.neighbour", "-ex", "watch wide", "--args", watched(), "10"},
                          run_options().timeout_after(60s).set_env("OMPDBG_HW_WATCHPOINTS", "force"));
    INFO(r.all());
    CHECK(has_line(r.out, "Hardware watchpoint 2: hot.counter"));
    CHECK(has_line(r.out, "Hardware read watchpoint 4: small"));
    CHECK(has_line(r.out, "Hardware access (read/write) watchpoint 5: halfword"));
    CHECK(has_line(r.err, "Hardware watchpoint slots exhausted: all 4 debug registers are in use."));
    // Deleting one frees its slot.
    CHECK(has_line(r.out, "Hardware watchpoint 6: hot.neighbour"));
    // One debug register covers at most 8 bytes (software watchpoints take a whole struct).
    CHECK(r.err.find("Cannot watch `wide': it is 24 bytes wide") != std::string::npos);
}

TEST_CASE("watch: hardware watchpoints trigger where the debug registers trap", "[cli][watch]") {
    auto r = ompdbg_cmds(watched(), {"break main", "run", "watch hot.counter", "continue"}, {"10"});
    INFO(r.all());
    REQUIRE(r.ok());
    if (r.out.find(fallback_note) != std::string::npos) {
        WARN("skipped: the debug registers of this machine accept writes but never trap");
        return;
    }
    CHECK(has_line(r.out, "Hardware watchpoint 2: hot.counter"));
    CHECK(has_line(r.out, "New value = 1"));
}

TEST_CASE("watch: an expression computed from memory is watched through every piece it reads, as gdb",
          "[cli][watch]") {
    // hot.counter + read_me: 0 + 7, then bump() makes it 8, the second thread's write 1007.
    std::vector<std::string> cmds{"break main", "run", "watch hot.counter + read_me", "continue", "continue"};
    auto r = ompdbg_cmds(watched(), cmds, {"10"});
    INFO(r.all());
    REQUIRE(r.ok());
    bool software = r.out.find(fallback_note) != std::string::npos;
    CHECK(has_line(r.out, std::string(software ? "Watchpoint" : "Hardware watchpoint") +
                              " 2: hot.counter + read_me"));
    auto values = [](const std::string& out) {
        std::vector<std::string> v;
        for (auto& l : debugger_lines(out)) {
            if (l.rfind("Old value = ", 0) == 0 || l.rfind("New value = ", 0) == 0) {
                v.push_back(l);
            }
        }
        return v;
    };
    CHECK(values(r.out) ==
          std::vector<std::string>{"Old value = 7", "New value = 8", "Old value = 8", "New value = 1007"});
    // gdb (its software watchpoints where ours are) reports the same changes.
    std::vector<std::string> gcmds;
    if (software) {
        gcmds.push_back("set can-use-hw-watchpoints 0");
    }
    gcmds.insert(gcmds.end(), cmds.begin(), cmds.end());
    auto g = gdb_cmds(watched(), gcmds, {"10"});
    INFO(g.all());
    CHECK(values(r.out) == values(g.out));
    // Deleting it takes every piece out: the program runs to its end.
    auto d = ompdbg_cmds(watched(), {"break main", "run", "watch hot.counter + read_me", "delete 2", "continue"},
                         {"10"});
    CHECK(d.out.find("exited normally") != std::string::npos);
}
