// Run control through the real ompdbg binary: `finish` values of small aggregates
// (rax/rdx/xmm0/xmm1), `finish` out of an inlined frame, `break ... thread N`, and
// `delete` followed by `continue` while other threads' hits are still queued, and silent
// counting breakpoints hit by threads running together.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>


#include "cli_common.hpp"
#include "daily_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

std::string app_target(const std::string& name) {
    return std::string(targets_dir) + "/app/" + name;
}

std::vector<std::string> app_target_variants(const std::string& name) {
    std::vector<std::string> out;
    for (const char* cc : {"gcc", "clang"}) {
        for (int dw : {4, 5}) {
            out.push_back(app_target(name) + "-" + cc + "-dwarf" + std::to_string(dw) + "-O0");
        }
    }
    return out;
}

/// ompdbg's and gdb's output of the same command script on `prog ARGS...` (a script file:
/// gdb reads a `commands` body only from one).
struct script_runs {
    run_result ours, theirs;
};
script_runs run_script_with_both(const std::string& script_text, const std::vector<std::string>& prog) {
    daily::scratch_dir dir;
    const std::string script = (dir.path() / "commands.gdb").string();
    std::ofstream(script) << script_text;
    std::vector<std::string> ours_args{"-x", script, "--args"};
    ours_args.insert(ours_args.end(), prog.begin(), prog.end());
    std::vector<std::string> gdb_args{"-x", script, "--args"};
    gdb_args.insert(gdb_args.end(), prog.begin(), prog.end());
    return {ompdbg_batch(ours_args, run_options().timeout_after(120s)),
            gdb_batch(gdb_args, run_options().timeout_after(120s))};
}

/// The `info threads` rows of hot_threads in `out`, and how many of them show a frame: a
/// thread whose registers cannot be read (still running) shows an error or no target id.
std::pair<std::size_t, std::size_t> hot_thread_rows(const std::string& out) {
    return {grep(out, R"(^[* ] +\d+ +(Thread 0x[0-9a-f]+ \()?LWP \d+\)? +"hot_threads")").size(),
            grep(out, R"(^[* ] +\d+ +Thread 0x[0-9a-f]+ \(LWP \d+\) "hot_threads" [^<])").size()};
}

}  // namespace

TEST_CASE("finish prints small struct return values from rax/rdx and xmm0/xmm1 as gdb does", "[cli]") {
    auto program = GENERATE(from_range(app_target_variants("app_returns")));
    std::vector<std::string> cmds;
    for (const char* fn : {"make_two_doubles", "make_two_floats_int", "make_long_double", "make_three_ints",
                           "make_one_float", "make_chars"}) {
        cmds.push_back(std::string("break ") + fn);
    }
    cmds.push_back("run");
    for (int i = 0; i < 6; ++i) {
        cmds.push_back("finish");
        cmds.push_back("continue");
    }
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO(program << "\nompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    auto expected = grep(theirs.out, "^Value returned is ");
    REQUIRE(expected.size() == 6);
    CHECK(joined(grep(ours.out, "^Value returned is ")) == joined(expected));
    // And what the program says it returned (gdb's formatting of the same values).
    CHECK(ours.out.find("two_doubles = {x = 3.5, y = 12.75}") != std::string::npos);
    CHECK(has_line(ours.out, "Value returned is $1 = {x = 3.5, y = 12.75}"));
    CHECK(has_line(ours.out, "Value returned is $3 = {n = 3000009, d = 0.375}"));
}

TEST_CASE("finish out of an inlined frame runs to the end of the inlined copy, as gdb does", "[cli]") {
    auto program = example_path("optimized", "gcc", 5, 2);
    int body = example_line("optimized.c", "square_body");
    std::vector<std::string> cmds{"break optimized.c:" + std::to_string(body), "run", "bt", "finish", "bt"};
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.exit_code == 0);
    // The frames after the finish: the inlined square() frame is gone.
    auto frames = grep(ours.out, "^#[0-9]+ ");
    auto gdb_frames = grep(theirs.out, "^#[0-9]+ ");
    REQUIRE(gdb_frames.size() >= 3);
    auto names = [](const std::vector<std::string>& v) {
        std::vector<std::string> out;
        static const std::regex fn(R"(^#(\d+) +(?:0x[0-9a-f]+ in )?([A-Za-z_][A-Za-z_0-9]*) )");
        for (auto& l : v) {
            std::smatch m;
            if (std::regex_search(l, m, fn)) {
                out.push_back(m[1].str() + " " + m[2].str());
            }
        }
        return out;
    };
    CHECK(joined(names(frames)) == joined(names(gdb_frames)));
    // The location printed after the finish names the same line as gdb's: the last source
    // line of each transcript (the backtrace after it prints none; gdb -batch prints no
    // "Run till exit" line).
    auto gdb_src = grep(theirs.out, R"(^\d+\t)");
    auto our_src = grep(ours.out, R"(^\d+\t)");
    REQUIRE(gdb_src.size() >= 2);
    REQUIRE(our_src.size() >= 2);
    CHECK(our_src.back() == gdb_src.back());
}

namespace {

/// The stops of a stepping transcript: "frame NAME LINE" for a frame line (with or without
/// its pc), "line N" for a source line; breakpoint reports and other lines left out.
std::vector<std::string> step_stops(const std::string& out) {
    static const std::regex frame(R"(^(?:0x[0-9a-f]+ in )?([A-Za-z_][A-Za-z_0-9:]*) \(.*\) at \S+:(\d+)$)");
    static const std::regex source(R"(^(?:0x[0-9a-f]+\t)?(\d+)\t)");
    std::vector<std::string> stops;
    for (const auto& l : lines_of(out)) {
        std::smatch m;
        if (l.rfind("Breakpoint ", 0) == 0) {
            continue;
        }
        if (std::regex_match(l, m, frame)) {
            stops.push_back("frame " + m[1].str() + " " + m[2].str());
        } else if (std::regex_search(l, m, source)) {
            stops.push_back("line " + m[1].str());
        }
    }
    return stops;
}

}  // namespace

TEST_CASE("step enters inlined calls and next steps over them in -O2 code, as gdb does", "[cli]") {
    auto program = GENERATE(from_range(example_variants("optimized", 2)));
    CAPTURE(program);
    // Each sequence stays in the program's own code (the next step would enter libc).
    std::vector<std::vector<std::string>> sequences{
        {"break sum_squares", "run", "step", "step", "step", "step"},
        {"break sum_squares", "run", "next", "next", "next"},
        {"break main", "run", "next", "step", "step"},
    };
    for (const auto& cmds : sequences) {
        auto ours = ompdbg_cmds(program, cmds);
        auto theirs = gdb_cmds(program, cmds);
        INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
        REQUIRE_FALSE(ours.timed_out);
        CHECK(ours.exit_code == 0);
        auto expected = step_stops(theirs.out);
        REQUIRE(expected.size() >= cmds.size() - 1);   // the breakpoint's line, then a stop a step
        CHECK(joined(step_stops(ours.out)) == joined(expected));
    }
}

TEST_CASE("break LOCATION thread N stops only in that thread", "[cli]") {
    int barrier = example_line("threads.c", "barrier");
    int hit = example_line("threads.c", "hit");
    // Four barrier hits: then every worker exists and none has passed the barrier.
    std::vector<std::string> cmds{"break threads.c:" + std::to_string(barrier),
                                  "run",
                                  "continue",
                                  "continue",
                                  "continue",
                                  "delete",
                                  "break threads.c:" + std::to_string(hit) + " thread 3",
                                  "info breakpoints",
                                  "continue",
                                  "print w->index",
                                  "continue"};
    auto r = ompdbg_cmds(example_path("threads"), cmds, {"4"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(count_lines_starting(r.out, "Thread ") >= 4);
    CHECK(r.out.find("\tstop only in thread 3") != std::string::npos);
    // Thread 3 is the second worker the main thread created: worker-1, works[1].
    std::regex hit_re(R"re(Thread (\d+) "([^"]+)" hit Breakpoint 2, )re");
    int hits = 0;
    for (auto& l : lines_of(r.out)) {
        std::smatch m;
        if (std::regex_search(l, m, hit_re)) {
            ++hits;
            CHECK(m[1] == "3");
            CHECK(m[2] == "worker-1");
        }
    }
    CHECK(hits == 1);
    CHECK(r.out.find("$1 = 1") != std::string::npos);
    CHECK(r.out.find("threads done") != std::string::npos);
    CHECK(r.out.find("exited normally]") != std::string::npos);
}

TEST_CASE("delete, then continue, while other threads' hits are still queued runs to the end", "[cli]") {
    int hit = example_line("threads.c", "hit");
    auto r = ompdbg_cmds(example_path("threads"), {"break threads.c:" + std::to_string(hit), "run", "delete", "continue"},
                         {"16"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(count_lines_starting(r.out, "Thread ") == 1);
    CHECK(r.out.find("threads done") != std::string::npos);
    CHECK(r.out.find("exited normally]") != std::string::npos);
}

// A silent counting breakpoint is decided with the hitting thread alone (the others go on
// running, process::set_early_breakpoint_reports): no hit may be lost or counted twice,
// and a breakpoint that does stop in the middle of them must stop every thread as before.
TEST_CASE("a silent counting breakpoint hit by threads running together counts every hit, and a stop among "
          "them stops every thread, as gdb",
          "[cli]") {
    const int threads = 4, per_thread = 3000;
    // halfway's own commands list the threads, from inside the stop it reports.
    auto [ours, theirs] = run_script_with_both(
        "break tick\ncommands\nsilent\ncontinue\nend\nbreak halfway\ncommands\ninfo threads\nend\nrun\n"
        "continue\ninfo breakpoints\n",
        {example_path("hot_threads"), std::to_string(threads), std::to_string(per_thread)});
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.exit_code == 0);
    const std::string total = std::to_string(threads * per_thread);
    for (const auto* r : {&ours, &theirs}) {
        CHECK(grep(r->out, R"(^Thread \d+ "hot_threads" hit Breakpoint 2, halfway \(index=0\) at )").size() == 1);
        CHECK(grep(r->out, "^\tbreakpoint already hit " + total + " times$").size() == 1);
        CHECK(grep(r->out, "^\tbreakpoint already hit 1 time$").size() == 1);
        CHECK(grep(r->out, "^ +info threads$").size() == 1);
        CHECK(grep(r->out, "^total " + total + "$").size() == 1);
        CHECK(grep(r->out, "exited normally\\]$").size() == 1);
    }
    // At the halfway stop every thread is stopped: `info threads` shows each with its frame
    // (read from its registers): main, the spinner, worker 0 and the workers not yet done.
    auto [rows, with_frames] = hot_thread_rows(ours.out);
    CHECK(rows >= 3);
    CHECK(with_frames == rows);
    CHECK(grep(ours.out, R"(^  +\d+ +Thread .* spinner \(arg=0x0\) at .*hot_threads\.c:)").size() == 1);
    CHECK(grep(ours.out, R"(^\* +\d+ +Thread .* halfway \(index=0\) at .*hot_threads\.c:)").size() == 1);
    CHECK(ours.err.find("rror") == std::string::npos);
}

// dprintf prints in the thread that hit it and goes on (decided in that thread alone).
TEST_CASE("dprintf prints at every hit of threads running together and never stops, as gdb", "[cli]") {
    const std::vector<std::string> cmds{R"(dprintf tick,"tick %ld at %p\n", *counter, counter)",
                                        "break halfway",
                                        "info breakpoints",
                                        "run",
                                        "print index",
                                        "continue",
                                        "info breakpoints",
                                        "dprintf tick",
                                        R"(dprintf tick,"%q\n")"};
    const std::vector<std::string> args{"4", "200"};
    auto ours = ompdbg_cmds(example_path("hot_threads"), cmds, args);
    auto theirs = gdb_cmds(example_path("hot_threads"), cmds, args);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    auto sorted_ticks = [](const std::string& out) {
        auto t = grep(out, "^tick \\d+ at 0x[0-9a-f]+$");
        std::sort(t.begin(), t.end());
        return t;
    };
    auto expected = sorted_ticks(theirs.out);
    REQUIRE(expected.size() == 800);
    CHECK(sorted_ticks(ours.out) == expected);
    for (const char* re : {R"(^Dprintf 1 at 0x[0-9a-f]+: file .*hot_threads\.c, line \d+\.$)",
                           R"(^1       dprintf        keep y   0x[0-9a-f]+ in tick at .*hot_threads\.c:\d+$)",
                           R"(^        printf "tick %ld at %p\\n", \*counter, counter$)",
                           R"(^\tbreakpoint already hit 800 times$)",
                           R"(^Thread \d+ "hot_threads" hit Breakpoint 2, halfway \(index=0\) at )", R"(^\$1 = 0$)",
                           "^total 800$"}) {
        CAPTURE(re);
        CHECK(grep(ours.out, re) == grep(theirs.out, re));
        CHECK_FALSE(grep(ours.out, re).empty());
    }
    CHECK(ours.err.find("Format string required") != std::string::npos);
    CHECK(ours.err.find("Unrecognized format specifier 'q' in printf") != std::string::npos);
}

// A conditional breakpoint's false hits are decided in the hitting thread alone as well;
// where the condition holds every thread is stopped before the stop is shown.
TEST_CASE("a conditional breakpoint hit by threads running together stops exactly where its condition holds, "
          "with every thread stopped, as gdb",
          "[cli]") {
    // The breakpoint's own commands list the threads, from inside each stop.
    std::string script = "break tick if *counter == 1234\ncommands\ninfo threads\nend\nrun\n";
    for (int i = 0; i < 4; ++i) {
        script += "print *counter\ncontinue\n";
    }
    script += "info breakpoints\n";
    auto [ours, theirs] = run_script_with_both(script, {example_path("hot_threads"), "4", "3000"});
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.exit_code == 0);
    for (const auto* r : {&ours, &theirs}) {
        // One stop per worker, each with its own counter at 1234.
        CHECK(grep(r->out, R"(^Thread \d+ "hot_threads" hit Breakpoint 1, tick \(counter=0x[0-9a-f]+ <ticks(\+\d+)?>\) at )")
                  .size() == 4);
        CHECK(grep(r->out, R"(^\$\d+ = 1234$)").size() == 4);
        CHECK(grep(r->out, "^\tstop only if \\*counter == 1234$").size() == 1);
        CHECK(grep(r->out, "^\tbreakpoint already hit 4 times$").size() == 1);
        CHECK(grep(r->out, "^total 12000$").size() == 1);
    }
    auto [rows, with_frames] = hot_thread_rows(ours.out);
    CHECK(grep(ours.out, "^  Id   Target Id").size() == 4);
    CHECK(rows >= 4 * 3);
    CHECK(with_frames == rows);
}

// gdb binds a bare `break LINE` to the default source file (main's) when it is set; after
// `run` the breakpoint must still be in that file, not in whatever file the program's first
// stop (in ld.so) belongs to.
TEST_CASE("break LINE set before run stops at that line of main's file, as gdb does", "[cli]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    const int line = example_line("structs.c", "factorial_base");
    std::vector<std::string> cmds{"break " + std::to_string(line), "run", "bt 1", "continue"};
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO(program << "\nompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    const std::string stop = "^Breakpoint 1, factorial \\(n=1\\) at .*structs\\.c:" + std::to_string(line) + "$";
    REQUIRE(grep(theirs.out, stop).size() == 1);
    CHECK(grep(ours.out, stop).size() == 1);
    CHECK(grep(ours.out, "^#0  factorial \\(n=1\\)") == grep(theirs.out, "^#0  factorial \\(n=1\\)"));
}
