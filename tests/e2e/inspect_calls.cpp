// Calling the program's functions from print and call (issue 22): C functions, function
// pointers, structs in registers and through a hidden pointer, varargs, shared-library
// functions, C++ members, overloads and libstdc++ xmethods, a breakpoint or a signal inside
// the call, calls refused, and a call in a worker thread of an OpenMP team. Every answer gdb
// can give on the same binary is compared with gdb's.

#include "cli_common.hpp"
#include "inspect_common.hpp"
#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <regex>
#include <sstream>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace fs = std::filesystem;

namespace {

const std::string ready = example_location("calls.c", "calls-ready");
const std::string cxx_ready = example_location("calls_cxx.cpp", "cxx-calls-ready");

bool has_text(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// gdb's error lines and ours (stderr), in order.
std::vector<std::string> error_lines(const std::string& err) {
    std::vector<std::string> out;
    for (const auto& l : lines_of(err)) {
        // ompdbg's batch mode names each failed command; gdb does not.
        if (!l.empty() && l.rfind("warning:", 0) != 0 && l.rfind("ompdbg: command", 0) != 0) {
            out.push_back(l);
        }
    }
    return out;
}

void compare_errors(const run_result& ours, const run_result& gdb) {
    CHECK(joined(error_lines(ours.err)) == joined(error_lines(gdb.err)));
}

}  // namespace

TEST_CASE("print calls C functions: integers, doubles, structs in registers and in memory, varargs, pointers",
          "[cli][inspect][calls]") {
    auto program = GENERATE(example_path("calls"), example_path("calls", "clang", 4));
    compare_with_gdb(program, {"break " + ready, "run", "print sq(7)", "print add3(1, 2, 3)", "print scale(1.5, 2)",
                               "print many(1, 2, 3, 4, 5, 6, 7, 8)", "print make_point(1, 2)",
                               "print make_mixed(2.5, 7)", "print make_big(10)", "print make_pair_d(1.5, 2.25)",
                               "print make_fi(1.5, 3)", "print norm1(origin)", "print sum_big(make_big(1))",
                               "print pair_sum(make_pair_d(1, 2))", "print sum_ints(3, 1, 2, 3)",
                               "print sum_doubles(2, 1.5, 2.25)", "print fp(5)", "print op(4)", "print (*fp)(6)",
                               "print sq(1) + sq(2) * 3", "print my_strlen(greeting)", "print my_strlen(\"abcd\")",
                               "print sq(sq(2))", "print $", "print number", "next", "print number"});
}

TEST_CASE("call prints nothing for void, and the calls' side effects are the program's", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "call bump()", "call bump()", "print calls_made",
                                  "print bump()", "call sq(3)", "call dump(&origin)", "print calls_made"};
    compare_with_gdb(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    CHECK(has_line(ours.out, "$1 = 2"));
    CHECK(has_line(ours.out, "point 3 -4"));
    CHECK(has_line(ours.out, "$4 = 3"));
}

TEST_CASE("ptype and whatis of a call give its type without calling, also before run, as gdb", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"ptype sq(2)", "whatis make_point(1, 2)", "ptype bump()", "break " + ready, "run",
                                  "whatis bump()", "ptype calls_made = 7", "print calls_made", "call bump()",
                                  "print calls_made"};
    compare_with_gdb(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    CHECK(has_line(ours.out, "$1 = 0"));   // neither whatis bump() nor the assignment ran
    CHECK(has_line(ours.out, "$2 = 1"));
}

TEST_CASE("a shared-library function without debug info needs a cast, as in gdb", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "print strlen(greeting)", "print (int)getpid()",
                                  "print (int)my_strlen(greeting)", "continue"};
    auto ours = ompdbg_cmds(program, cmds);
    INFO(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(ours.err, "'strlen' has unknown return type; cast the call to its declared return type"));
    // The pid the program prints about itself is what getpid() returned in the call.
    std::smatch m;
    REQUIRE(std::regex_search(ours.out, m, std::regex(R"(pid (\d+) made 0)")));
    CHECK(has_line(ours.out, "$1 = " + m[1].str()));
    CHECK(has_line(ours.out, "$2 = 5"));
}

TEST_CASE("bad calls give gdb's messages and leave the program as it was", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "print number(1)", "print sq()", "print add3(1)",
                                  "print origin(1)", "print sq(1, 2)", "print nosuch(1)",
                                  "set may-call-functions off", "show may-call-functions", "print sq(2)",
                                  "set may-call-functions on", "print sq(2)", "next", "print number"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    compare_errors(ours, gdb);
    compare_with_gdb(program, cmds);
}

TEST_CASE("an address that is not code: the call faults and stays there, as gdb's does", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "print ((int (*)(int))0)(1)"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    compare_errors(ours, gdb);
    compare_with_gdb(program, cmds);
}

TEST_CASE("a breakpoint inside a called function stops there, and continue ends the call silently",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "break sq", "print sq(9)", "print x", "continue",
                                  "print number", "delete 2", "print sq(2)", "next", "print number"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(ours.err, "The program being debugged stopped while in a function called from GDB."));
    compare_errors(ours, gdb);
    compare_with_gdb(program, cmds);
}

TEST_CASE("until and advance out of a called function abandoned at a breakpoint end where the call was made, "
          "and the program runs on, as gdb's do",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    for (std::string leave : {"until 40", "advance 40"}) {
        CAPTURE(leave);
        std::vector<std::string> cmds{"break " + ready, "run", "break sq", "print sq(9)", leave, "bt"};
        compare_with_gdb(program, cmds);
        // And the program runs on from there to its end (it faulted in _start before).
        cmds.insert(cmds.end(), {"delete", "continue"});
        auto ours = ompdbg_cmds(program, cmds);
        INFO(ours.all());
        REQUIRE_FALSE(ours.timed_out);
        CHECK(std::regex_search(ours.out, std::regex(R"(#0 +(0x[0-9a-f]+ in )?main \(\) at .*calls\.c:68)")));
        CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
        CHECK_FALSE(has_line(ours.out, "Program received signal SIGSEGV, Segmentation fault."));
    }
}

TEST_CASE("next, step, until, stepi and nexti out of a called function abandoned at a breakpoint stop silently "
          "where the call was made, as gdb pops its dummy frame",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    // sq's body is four instructions after its breakpoint: stepi 8 returns (and ends early).
    for (std::string leave : {"next", "step", "until", "next 3", "stepi", "stepi 8", "nexti 8"}) {
        CAPTURE(leave);
        std::vector<std::string> cmds{"break " + ready, "run", "break sq", "print sq(9)", leave, "bt", "print $pc"};
        compare_with_gdb(program, cmds);
        // And the program runs on from there to its end (it faulted in _start before); after
        // one stepi, still in sq, the first continue ends the call silently.
        cmds.insert(cmds.end(), {"delete", "continue"});
        if (leave == "stepi") {
            cmds.push_back("continue");
        }
        auto ours = ompdbg_cmds(program, cmds);
        INFO(ours.all());
        REQUIRE_FALSE(ours.timed_out);
        CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
        CHECK_FALSE(has_line(ours.out, "Program received signal SIGSEGV, Segmentation fault."));
    }
}

TEST_CASE("next, step, stepi, nexti and finish out of a called function without line information stop silently "
          "where the call was made, as gdb's do",
          "[cli][inspect][calls]") {
    daily::scratch_dir dir;
    const std::string program = (dir.path() / "calls-nodebug").string();
    REQUIRE(run({"objcopy", "--strip-debug", example_path("calls"), program}).ok());
    for (std::string leave : {"next", "step", "stepi 12", "nexti 12", "finish"}) {
        CAPTURE(leave);
        std::vector<std::string> cmds{"break main", "run", "break sq", "print (int)sq(9)", leave, "bt", "print $pc",
                                      "delete", "continue"};
        auto ours = ompdbg_cmds(program, cmds);
        auto theirs = gdb_cmds(program, cmds);
        INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
        REQUIRE_FALSE(ours.timed_out);
        // gdb and ompdbg stop main at different instructions (gdb skips the frame set-up of
        // a function without line information): each must come back to its own stop.
        for (const run_result* r : {&ours, &theirs}) {
            std::smatch at;
            REQUIRE(std::regex_search(r->out, at, std::regex(R"(Breakpoint 1, (0x[0-9a-f]+) in main \(\))")));
            const std::string pc = at[1].str();
            CHECK(has_line(r->out, "#0  " + pc + " in main ()"));
            std::ostringstream short_pc;
            short_pc << "$1 = (void (*)()) 0x" << std::hex << std::stoull(pc, nullptr, 16) << " <main";
            CHECK(has_text(r->out, short_pc.str()));
            CHECK(has_line(r->err, "When the function is done executing, GDB will silently stop."));
            CHECK(std::regex_search(r->out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
            CHECK_FALSE(has_line(r->out, "Program received signal SIGSEGV, Segmentation fault."));
            CHECK_FALSE(has_text(r->out, "<function called from gdb>"));
        }
        bool until_exit = leave == "next" || leave == "step";
        CHECK(has_line(ours.out, "Single stepping until exit from function sq,") == until_exit);
        CHECK(has_line(theirs.out, "Single stepping until exit from function sq,") == until_exit);
    }
}

TEST_CASE("a call that segfaults: unwindonsignal off stays in the frame, on restores the caller",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    for (std::string setting : {"off", "on"}) {
        CAPTURE(setting);
        std::vector<std::string> cmds{"break " + ready, "run", "set unwindonsignal " + setting,
                                      "show unwindonsignal", "print crash(0)", "frame", "print sq(4)"};
        if (setting == "on") {
            cmds.insert(cmds.end(), {"next", "print number"});
        }
        auto ours = ompdbg_cmds(program, cmds);
        auto gdb = gdb_cmds(program, cmds);
        INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
        REQUIRE_FALSE(ours.timed_out);
        CHECK(has_line(ours.out, "Program received signal SIGSEGV, Segmentation fault."));
        compare_errors(ours, gdb);
        compare_with_gdb(program, cmds);
    }
}

TEST_CASE("before run a call finds its function, a shared library's PLT stub too, and is refused as in gdb",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"print strlen(0)", "call getpid()", "print (int)getpid()", "print sq(1)",
                                  "print sq(1) + 1", "call bump()", "print nosuch(1)", "print calls_made"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(count_lines_starting(ours.err, "You can't do that without a process to debug.") == 6);
    CHECK(has_line(ours.err, "No symbol \"nosuch\" in current context."));
    compare_errors(ours, gdb);
    compare_with_gdb(program, cmds);
}

TEST_CASE("calls are refused without a process, and on a core file", "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    auto before_run = ompdbg_cmds(program, {"print sq(2)"});
    CHECK(has_line(before_run.err, "You can't do that without a process to debug."));
    fs::path core = fs::temp_directory_path() / ("ompdbg-calls-core-" + std::to_string(::getpid()));
    auto dump = ompdbg_cmds(program, {"break " + ready, "run", "generate-core-file " + core.string(), "kill"});
    INFO(dump.all());
    REQUIRE(fs::exists(core));
    auto r = ompdbg_batch({"-ex", "print sq(2)", "-ex", "print number", program, core.string()},
                          run_options().timeout_after(60s));
    fs::remove(core);
    INFO(r.all());
    CHECK(has_line(r.err, "You can't do that without a process to debug."));
    CHECK(has_line(r.out, "$1 = 6"));
}

TEST_CASE("C++: member functions through an object, a pointer and this, overloads, namespaces",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls_cxx");
    std::vector<std::string> cmds{"break " + cxx_ready, "run", "print c.get()", "print pc->get()",
                                  "print c.doubled()", "print twice(3)", "print twice(1.5)",
                                  "print geo::area(2, 3)", "print c.add(2)", "print counter::limit()",
                                  "print c.nosuch()", "print twice()", "print c.get() + pc->get()"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    INFO(ours.all() << "\n---- gdb:\n" << gdb.all());
    compare_errors(ours, gdb);
    compare_with_gdb(program, cmds);
}

TEST_CASE("C++: std containers answer size, empty, at, front, back and get without running code",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls_cxx");
    std::vector<std::string> cmds{"break " + cxx_ready, "run", "print v.size()", "print v[1]", "print v.at(2)",
                                  "print v.front()", "print v.back()", "print m.size()", "print s.empty()",
                                  "print m.empty()", "print str.size()", "print str.length()",
                                  "print *up.get()", "print v.size() + m.size()"};
    compare_with_gdb(program, cmds);
    // Nothing ran: with calls forbidden the same answers come.
    std::vector<std::string> forbidden{"break " + cxx_ready, "run", "set may-call-functions off", "print v.size()",
                                       "print s.empty()", "print c.get()"};
    auto ours = ompdbg_cmds(program, forbidden);
    INFO(ours.all());
    CHECK(has_line(ours.out, "$1 = 3"));
    CHECK(has_line(ours.out, "$2 = true"));
    CHECK(has_line(ours.err, "Cannot call functions in the program: may-call-functions is off."));
}

TEST_CASE("OpenMP: a call runs in the selected worker thread while the team stays stopped",
          "[cli][inspect][calls][ompd]") {
    std::string program = std::string(examples_dir) + "/openmp/omp_calls";
    if (!fs::exists(program)) {
        WARN("no OpenMP examples (scripts/bootstrap builds their runtime)");
        return;
    }
    std::vector<std::string> cmds{"break omp_checkpoint if id == 1", "run", "print id", "info threads",
                                  "print times_ten(id)", "print (int)omp_get_thread_num()", "info threads",
                                  "print id", "continue"};
    std::vector<std::string> args = ex_args(cmds);
    args.push_back(program);
    auto r = ompdbg_batch(args, run_options().timeout_after(90s));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(has_line(r.out, "$1 = 1"));
    CHECK(has_line(r.out, "$2 = 10"));
    CHECK(has_line(r.out, "$3 = 1"));   // the worker's own thread number: it ran there
    CHECK(has_line(r.out, "$4 = 1"));
    // The other threads did not move: both `info threads` tables are the same.
    auto tables = grep(r.out, R"(^[ *] +[0-9]+ +Thread )");
    REQUIRE(tables.size() % 2 == 0);
    REQUIRE(tables.size() >= 6);
    std::vector<std::string> first(tables.begin(), tables.begin() + tables.size() / 2);
    std::vector<std::string> second(tables.begin() + tables.size() / 2, tables.end());
    CHECK(joined(first) == joined(second));
    CHECK(has_text(r.out, "truth: done team_size=3"));
}

TEST_CASE("Ctrl-C interrupts a call that does not return, with gdb's message, and the prompt answers",
          "[cli][inspect][calls]") {
    background_process dbg({ompdbg_binary, example_path("calls")});
    const std::regex prompt(R"(\(ompdbg\) $)");
    REQUIRE(dbg.wait_for_output(prompt, 60s));
    dbg.write_stdin("break " + ready + "\n");
    REQUIRE(dbg.wait_for_output(prompt, 60s));
    dbg.write_stdin("run\n");
    REQUIRE(dbg.wait_for_output(prompt, 60s));
    dbg.write_stdin("print spin()\n");
    REQUIRE(dbg.wait_for_line(std::regex("^spinning$"), 60s));   // the call runs
    dbg.send_signal(SIGINT);   // what the terminal does on Ctrl-C
    auto stop = dbg.wait_for_output(std::regex(R"(Program received signal SIGINT, Interrupt\.[\s\S]*\(ompdbg\) $)"),
                                    60s);
    REQUIRE(stop);
    // Interrupted in the call (in spin, or in the write of its line just before).
    dbg.write_stdin("bt\n");
    CHECK(dbg.wait_for_output(std::regex(R"(spin \(\) at [\s\S]*\(ompdbg\) $)"), 60s));
    // The thread stays in the interrupted call (unwindonsignal is off); calls still work.
    dbg.write_stdin("print sq(3)\n");
    auto p = dbg.wait_for_output(std::regex(R"(\$1 = 9\n\(ompdbg\) $)"), 60s);
    CHECK(p);
    dbg.close_stdin();   // EOF: quits and kills the program
    auto end = dbg.wait_exit(60s);
    REQUIRE(end);
}

TEST_CASE("the program exiting inside a call ends the call with gdb's message, the debugger goes on",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "call (void)exit(3)", "print number", "info threads"};
    compare_with_gdb(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    INFO(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    CHECK(std::regex_search(ours.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited with code 03\])")));
    CHECK(has_line(ours.err, "The program being debugged exited while in a function called from GDB."));
    // gdb names the function by libc's internal alias (__GI_exit); ompdbg by the name called.
    CHECK(has_line(ours.err, "(exit) will be abandoned."));
}

TEST_CASE("finish out of a call stopped at a breakpoint returns its value to the caller's frame, as gdb",
          "[cli][inspect][calls]") {
    compare_with_gdb(example_path("calls"), {"break " + ready, "run", "break sq", "print sq(5)", "finish", "bt",
                                             "print number", "next", "print number"});
}

TEST_CASE("bt in a call stopped at a breakpoint or a signal shows gdb's <function called from gdb> frame between "
          "the called function and its caller, nested calls too",
          "[cli][inspect][calls]") {
    std::string program = example_path("calls");
    std::vector<std::string> cmds{"break " + ready, "run", "break sq", "print sq(4)", "bt", "up", "up", "frame 1",
                                  "print add3(1, 2, sq(5))", "bt", "bt -full", "finish", "bt", "continue", "bt",
                                  "print number"};
    auto ours = ompdbg_cmds(program, cmds);
    INFO(ours.all());
    CHECK(count_lines_starting(ours.out, "#1  <function called from gdb>") >= 3);
    CHECK(has_line(ours.out, "#3  <function called from gdb>"));
    compare_with_gdb(program, cmds);
    compare_with_gdb(program, {"break " + ready, "run", "print crash(0)", "bt", "frame 2", "print number",
                               "info locals", "print sq(3)", "bt"});
}

TEST_CASE("C++: long double arguments and results, and methods found in a base class, as gdb", "[cli][inspect][calls]") {
    std::string program = example_path("calls_cxx");
    compare_with_gdb(program, {"break " + cxx_ready, "run", "print ld_scale(2.5, 3)", "print ld_scale(ld, 4)",
                               "print ld_scale(1.25, 2) + 1", "print d.id()", "print d.own()", "print (&d)->id()",
                               "print c.get()", "next", "print ld"});
}

TEST_CASE("__int128 arguments and results travel in two integer registers each", "[cli][inspect][calls]") {
    // gdb 13 answers 0 for every call here (it does not pass or read the two halves);
    // the program's own arithmetic is the ground truth.
    std::string program = example_path("calls_cxx");
    auto ours = ompdbg_cmds(program, {"break " + cxx_ready, "run", "print wide_add(1, 2)", "print wide_add(-5, 2)",
                                      "print (long)wide_shift(40)", "print (long)wide_add(wide_shift(62), wide_shift(62))",
                                      "print high_half(wide)", "print high_half(wide_shift(100))",
                                      "print high_half(wide_add(wide, wide))"});
    INFO(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(ours.out, "$1 = 3"));
    CHECK(has_line(ours.out, "$2 = -3"));
    CHECK(has_line(ours.out, "$3 = 1099511627776"));
    CHECK(has_line(ours.out, "$4 = -9223372036854775808"));
    CHECK(has_line(ours.out, "$5 = 64"));            // wide is 1 << 70
    CHECK(has_line(ours.out, "$6 = 68719476736"));   // 1 << 36
    CHECK(has_line(ours.out, "$7 = 128"));
}

TEST_CASE("__int128 values print all 128 bits in every format, as gdb prints a variable", "[cli][inspect][calls]") {
    std::string program = example_path("calls_cxx");
    // gdb prints an __int128 variable whole (it fails on the calls: see the test above).
    compare_with_gdb(program, {"break " + cxx_ready, "run", "print wide", "print/x wide", "print/o wide", "info locals"});
    auto ours = ompdbg_cmds(program, {"break " + cxx_ready, "run", "print wide_shift(100)", "print/d wide_shift(127)",
                                      "print wide_shift(127)", "print/x wide_add(-5, 2)", "print/z wide",
                                      "print/t wide_shift(65)"});
    INFO(ours.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(has_line(ours.out, "$1 = 1267650600228229401496703205376"));   // 2^100
    CHECK(has_line(ours.out, "$2 = -170141183460469231731687303715884105728"));
    CHECK(has_line(ours.out, "$3 = 170141183460469231731687303715884105728"));   // 2^127, unsigned
    CHECK(has_line(ours.out, "$4 = 0xfffffffffffffffffffffffffffffffd"));
    CHECK(has_line(ours.out, "$5 = 0x00000000000000400000000000000000"));
    CHECK(has_line(ours.out, "$6 = 1" + std::string(65, '0')));
}

TEST_CASE("C++: a class with a user-provided copy constructor and destructor is passed by invisible reference to "
          "a copy the call makes and destroys, and returned through a hidden pointer, as gdb",
          "[cli][inspect][calls]") {
    auto program = GENERATE(example_path("calls_cxx"), example_path("calls_cxx", "clang", 4));
    std::vector<std::string> cmds{"break " + cxx_ready, "run", "print take_tracked(tr)", "print destroyed",
                                  "print tr", "print make_tracked(3)", "print make_tracked(3).v",
                                  "print take_tracked(make_tracked(5))", "print destroyed", "next", "print tr"};
    compare_with_gdb(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    INFO(ours.all());
    CHECK(has_line(ours.out, "$1 = 1004"));   // the copy constructor ran
    CHECK(has_line(ours.out, "$2 = 1"));      // and the destructor of the copy
}
