// Fast breakpoints (issue 21): conditions evaluated in the program by ompdbg's agent through
// jump pads. Ground truth is the program's own (fast_loop prints how often f ran and the sum
// of its results), the file's code bytes, and the breakpoint's exact hit count.

#include <catch2/catch.hpp>

#include "fast_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ompdbg::test;
using namespace std::chrono_literals;

using namespace ompdbg::test::fast;

TEST_CASE("a fast conditional breakpoint hit by 4 OpenMP threads stops exactly where its condition holds",
          "[e2e][fast][break][condition]") {
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "break f if i == 150000", "run", "print i", "print tid", "bt", "info breakpoints", "continue"},
                   {"200000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 150000"));
    CHECK(has_line(r.out, "$2 = 3"));   // static schedule: i 150000..199999 is thread 3's
    CHECK(grep(r.out, "^#0  f \\(i=150000, tid=3\\) at .*fast_loop.c:").size() == 1);
    CHECK(grep(r.out, "^#1  0x[0-9a-f]+ in main._omp_fn.0 ").size() == 1);
    CHECK(has_line(r.out, "\tstop only if i == 150000 (target evaluation)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(200000, 4)));
    CHECK(grep(r.out, "^\\[Inferior 1 \\(process [0-9]+\\) exited normally\\]$").size() == 1);
}

TEST_CASE("fast breakpoints count every hit whose condition holds, silent ones included",
          "[e2e][fast][break][condition]") {
    auto r = debug(fast_loop("O0"),
                   {"break f if i % 50000 == 7 && global_limit == 5", "commands", "silent", "continue", "end", "run",
                    "info breakpoints"},
                   {"200000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, ground_truth(200000, 4)));
    // (The program has exited: the path is no longer shown, the count stays.)
    CHECK(has_line(r.out, "\tstop only if i % 50000 == 7 && global_limit == 5"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 4 times"));
}

TEST_CASE("a fast condition on a parameter held in a register stops with the site's registers",
          "[e2e][fast][break][condition]") {
    auto r = debug(fast_loop("O2"),
                   {"set breakpoint fast on", "break f if i == 777", "run", "print i", "print $rdi", "bt 1", "info breakpoints", "continue"},
                   {"100000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 777"));
    CHECK(has_line(r.out, "$2 = 777"));
    CHECK(grep(r.out, "^#0  f \\(i=(i@entry=)?777, tid=(tid@entry=)?0\\) at .*fast_loop.c:").size() == 1);
    CHECK(has_line(r.out, "\tstop only if i == 777 (target evaluation)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(100000, 4)));
}

TEST_CASE("a condition the agent cannot evaluate stays with the debugger and says so",
          "[e2e][fast][break][condition]") {
    // Every call stops for the debugger here: 20,000 of them keep the sanitizer build's
    // run well inside the time limit on a loaded 2-core machine.
    auto r = debug(fast_loop("O0"), {"set breakpoint fast on", "break f if i > 19998.5", "run", "print i", "info breakpoints", "continue"},
                   {"20000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 19999"));
    CHECK(grep(r.out, "^\tstop only if i > 19998.5 \\(host evaluation: .+\\)$").size() == 1);
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(20000, 4)));
}

TEST_CASE("a site too short for the jump keeps its int3: the condition stays with the debugger, and says why",
          "[e2e][fast][break][condition]") {
    // tiny() at -O2 is `mov %rdi,%rax; ret`: the jump would replace the return.
    auto r = debug(fast_loop("O2"), {"set breakpoint fast on", "break tiny if x == 500", "run", "print x",
                                     "info breakpoints", "continue"},
                   {"1000", "2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 500"));
    CHECK(grep(r.out, "^\tstop only if x == 500 \\(host evaluation: int3 kept: a return.*\\)$").size() == 1);
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(1000, 2)));
    CHECK(has_line(r.out, "tiny sum 499500"));
}

TEST_CASE("set breakpoint fast off keeps every condition with the debugger", "[e2e][fast][break][condition]") {
    auto r = debug(fast_loop("O0"), {"break f if i == 4000", "run", "info breakpoints", "continue"}, {"8000", "4"},
                   run_options().set_env("OMPDBG_FAST_BREAKPOINTS", "off"));
    INFO(r.all());
    CHECK(has_line(r.out, "\tstop only if i == 4000"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(8000, 4)));
}

TEST_CASE("detach with jump pads installed restores the file's code bytes and the program finishes",
          "[e2e][fast][break][detach]") {
    // The program compares f's bytes in memory with its executable's once it is on its own.
    auto r = debug(fast_loop("O0"), {"set breakpoint fast on", "break f if i == 1000", "run", "info breakpoints", "detach"},
                   {"400000", "4", "check"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "\tstop only if i == 1000 (target evaluation)"));
    CHECK(grep(r.out, "^\\[Inferior 1 \\(process [0-9]+\\) detached\\]$").size() == 1);
    CHECK(has_line(r.out, ground_truth(400000, 4)));
    CHECK(has_line(r.out, "code of f equals the file"));
}

TEST_CASE("kill with jump pads installed ends the program and the session cleanly", "[e2e][fast][break]") {
    auto r = debug(fast_loop("O0"), {"break f if i == 1000", "run", "kill", "info breakpoints"}, {"400000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(grep(r.out, "^\\[Inferior 1 \\(process [0-9]+\\) killed\\]$").size() == 1);
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
}

TEST_CASE("an agent the trust policy refuses leaves conditions with the debugger, with a clear line",
          "[e2e][fast][break][condition]") {
    auto dir = std::filesystem::temp_directory_path() / ("ompdbg_untrusted_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(std::string(plugins_dir) + "/libompdbg_agent.so", dir / "libompdbg_agent.so",
                               std::filesystem::copy_options::overwrite_existing);
    ::chmod(dir.c_str(), 0777);
    auto r = debug(fast_loop("O0"), {"break f if i == 4000", "run", "info breakpoints", "continue"}, {"8000", "4"},
                   run_options().set_env("OMPDBG_AGENT_LIBRARY", (dir / "libompdbg_agent.so").string()));
    INFO(r.all());
    CHECK(grep(r.all(), "^Fast breakpoints: the agent is refused: .*; conditions are evaluated by the debugger at each "
                        "stop\\.$").size() == 1);
    CHECK(has_line(r.out, "\tstop only if i == 4000"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(8000, 4)));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a statically linked program keeps int3 breakpoints, with a clear line", "[e2e][fast][break][condition]") {
    auto r = debug(std::string(targets_dir) + "/fast/fast_static-gcc-dwarf5-O0",
                   {"break g if k == 300", "run", "print k", "info breakpoints", "continue"}, {});
    INFO(r.all());
    CHECK(has_line(r.all(), "Fast breakpoints: the program is statically linked, the agent cannot be loaded into it; "
                            "conditions are evaluated by the debugger at each stop."));
    CHECK(has_line(r.out, "$1 = 300"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, "static total 499500"));
}

/// The value `print n` gave ($1), or -1.
long printed_n(const std::string& out) {
    std::smatch m;
    return std::regex_search(out, m, std::regex(R"(\$1 = (\d+)\n)")) ? std::stol(m[1].str()) : -1;
}

TEST_CASE("an attached process gets the agent with a dlopen call at its first condition, and runs on after detach",
          "[e2e][fast][break][attach]") {
    background_process prog({example_path("counter"), "100000"});
    REQUIRE(prog.wait_for_line(std::regex("^counter 3$"), 30s));
    const std::string pid = std::to_string(prog.pid());
    auto maps_have_agent = [&] {
        std::ifstream maps("/proc/" + pid + "/maps");
        std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
        return text.find("libompdbg_agent.so") != std::string::npos;
    };
    REQUIRE_FALSE(maps_have_agent());
    // True once in 25 calls (every half second), wherever the counter is when we attach.
    auto r = ompdbg_batch(ex_args({"attach " + pid, "set breakpoint fast on", "break print_counter if n % 25 == 0",
                                   "continue", "print n", "info breakpoints", "detach"}),
                          run_options().timeout_after(120s));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "Fast breakpoints: loaded the agent " + std::string(plugins_dir) +
                              "/libompdbg_agent.so into process " + pid + "."));
    CHECK(has_line(r.out, "\tstop only if n % 25 == 0 (target evaluation)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    long n = printed_n(r.out);
    REQUIRE(n > 0);
    CHECK(n % 25 == 0);
    // It stays loaded, inert: the program counts on from where it stopped, untraced.
    CHECK(maps_have_agent());
    CHECK(prog.wait_for_line(std::regex("^counter " + std::to_string(n - 1) + "$"), 30s));
    CHECK(prog.wait_for_line(std::regex("^counter " + std::to_string(n) + "$"), 30s));
    CHECK(prog.wait_for_line(std::regex("^counter " + std::to_string(n + 2) + "$"), 30s));
    auto status = run({"grep", "TracerPid", "/proc/" + pid + "/status"});
    CHECK(status.out == "TracerPid:\t0\n");
}

TEST_CASE("fast breakpoints off: an attached process gets no agent", "[e2e][fast][break][attach]") {
    background_process prog({example_path("counter"), "100000"});
    REQUIRE(prog.wait_for_line(std::regex("^counter 3$"), 30s));
    const std::string pid = std::to_string(prog.pid());
    auto r = ompdbg_batch(ex_args({"attach " + pid, "set breakpoint fast off", "break print_counter if n % 10 == 0",
                                   "continue", "print n", "detach"}),
                          run_options().timeout_after(120s));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    long n = printed_n(r.out);
    CHECK(n > 0);
    CHECK(n % 10 == 0);
    CHECK(r.out.find("Fast breakpoints:") == std::string::npos);
    std::ifstream maps("/proc/" + pid + "/maps");
    std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    CHECK(text.find("libompdbg_agent.so") == std::string::npos);
}

TEST_CASE("threads stopped inside a jump pad or the agent show the program's frames, and the run stays exact",
          "[e2e][fast][break]") {
    // Thread 3 stops late in its share; the other three are stopped wherever they are, most
    // often in f's pad or in the agent evaluating the condition for them.
    auto r = debug(fast_loop("O0"), {"break f if i == 3500000", "run", "thread apply all bt", "info breakpoints",
                                     "continue"},
                   {"4000000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto innermost = grep(r.out, "^#0 ");
    CHECK(innermost.size() == 4);
    for (const auto& l : innermost) {
        CHECK(l.find("ompdbg_agent") == std::string::npos);   // (not the source's path)
    }
    // A pad is anonymous memory: `?? ()` with no library after it. (A thread done with its
    // share waits in libgomp, whose stripped frames are `?? () from libgomp.so.1`, as in gdb.)
    CHECK(grep(r.out, "^#[0-9]+ .* in \\?\\? \\(\\)$").empty());
    CHECK(has_line(r.out, "\tbreakpoint already hit 1 time"));
    CHECK(has_line(r.out, ground_truth(4000000, 4)));
}

TEST_CASE("a fast condition decided without the flags or with them stops with the site's flags as gdb shows them",
          "[e2e][fast][break][condition]") {
    // i == N compares without touching the flags (lea, jrcxz); i >= N && i <= N keeps them in
    // %ax around cmp and gives them back before the stop, even where they are dead at f's
    // site and a false pass leaves them changed.
    for (const char* cond : {"i == 150000", "i >= 150000 && i <= 150000"}) {
        const std::vector<std::string> cmds = {"break f if " + std::string(cond), "run", "print i", "print $eflags",
                                               "print $rcx", "print $rax"};
        auto r = debug(fast_loop("O0"), cmds, {"200000", "4"});
        auto g = gdb_cmds(fast_loop("O0"), cmds, {"200000", "4"});
        INFO(r.all() << "\ngdb:\n" << g.out << g.err);
        REQUIRE_FALSE(r.timed_out);
        CHECK(has_line(r.out, "$1 = 150000"));
        auto flags = grep(g.out, "^\\$2 = \\[.*\\]$");
        REQUIRE(flags.size() == 1);
        CHECK(has_line(r.out, flags[0]));
        for (const char* reg : {"^\\$3 = ", "^\\$4 = "}) {
            auto theirs = grep(g.out, std::string(reg) + "-?[0-9]+$");
            REQUIRE(theirs.size() == 1);
            CHECK(has_line(r.out, theirs[0]));
        }
    }
}

TEST_CASE("an ignore count given to a fast conditional breakpoint at its stop is counted to the program's end",
          "[e2e][fast][break][condition]") {
    // The record stops at every hit whose condition holds, so the process would exit without
    // the agent's sync at exit; the ignore count makes it count hits in the agent: the sync
    // is planted then, and the last ignored hits reach the hit count (gdb counts them).
    auto r = debug(fast_loop("O0"), {"break f if i % 2 == 0", "run", "ignore 1 1000000", "continue", "info breakpoints"},
                   {"200000", "4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, ground_truth(200000, 4)));
    CHECK(has_line(r.out, "\tbreakpoint already hit 100000 times"));
}
