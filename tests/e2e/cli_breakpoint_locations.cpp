// Breakpoints with several locations and C++ names, against gdb 13 on the same binaries:
// the What column of `info breakpoints` names each location by its symbol as gdb does
// ("in geometry::area(int) at ...", "in shape::area() const", "in twice<int>(int)", plain
// C names unchanged), and a hit of a breakpoint with several locations says which one
// ("Breakpoint 1.2, ", "Temporary breakpoint 1.1, ", "Thread 3 "tally-double" hit
// Breakpoint 1.2, ") while a one-location breakpoint keeps "Breakpoint 1, ".
#include <catch2/catch.hpp>

#include <regex>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

std::vector<std::string> app_target_variants(const std::string& name) {
    std::vector<std::string> out;
    for (const char* cc : {"gcc", "clang"}) {
        for (int dw : {4, 5}) {
            out.push_back(std::string(targets_dir) + "/app/" + name + "-" + cc + "-dwarf" + std::to_string(dw) +
                          "-O0");
        }
    }
    return out;
}

}  // namespace

TEST_CASE("info breakpoints names C++ locations by symbol with parameter types as gdb does",
          "[cli][gdb-compare]") {
    // Overloads, template instances, a const method, a static inline function, main and a
    // function taking references, before and after `run`.
    auto program = GENERATE(from_range(example_variants("cxx_features")));
    compare_with_gdb(program, {"break geometry::area", "break largest", "break twice", "break geometry::shape::scaled",
                               "tbreak geometry::shape::id", "break main", "break bump", "info breakpoints", "run",
                               "info breakpoints"});
}

TEST_CASE("info breakpoints names the inlined copies of C++ functions as gdb does", "[cli][gdb-compare]") {
    // -O2: area's inlined copies are named by their linkage name ("geometry::area(double)");
    // clang gives the static twice a linkage name ("twice(int)"), gcc does not ("twice").
    // gcc gives several inlined copies one DW_AT_entry_pc; each is placed at the start of its
    // first range, as gdb places it (4 locations of geometry::area, not 3).
    int twice_line = example_line("cxx_features.cpp", "twice_body");
    REQUIRE(twice_line > 0);
    std::vector<std::string> cmds{"break geometry::area", "break twice",
                                  "break cxx_features.cpp:" + std::to_string(twice_line), "info breakpoints"};
    for (int dwarf : {4, 5}) {
        for (const char* cc : {"gcc", "clang"}) {
            compare_with_gdb(example_path("cxx_features", cc, dwarf, 2), cmds);
        }
    }
}

TEST_CASE("info breakpoints names methods, destructors, operators and template functions of cxx_std as gdb does",
          "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("cxx_std")));
    int area_line = example_line("cxx_std.cpp", "circle_area");
    REQUIRE(area_line > 0);
    compare_with_gdb(program, {"break twice", "break circle::area", "break shape::~shape",
                               "break cxx_std.cpp:" + std::to_string(area_line),
                               "break std::vector<int, std::allocator<int> >::size",
                               "break std::unique_ptr<point, std::default_delete<point> >::operator->",
                               "info breakpoints"});
}

TEST_CASE("C functions and their inlined copies keep their plain names in info breakpoints", "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("optimized", 0)), from_range(example_variants("optimized", 2)));
    compare_with_gdb(program, {"break square", "break sum_squares", "info breakpoints", "run", "continue",
                               "continue"});
}

TEST_CASE("a hit of a breakpoint with several locations names the location as gdb does: Breakpoint 1.2",
          "[cli][gdb-compare]") {
    // bump has one location (Breakpoint 2, ), area and largest two each (1.1, 1.2, 3.1, 3.2).
    auto program = GENERATE(from_range(example_variants("cxx_features")));
    compare_with_gdb(program, {"break geometry::area", "break bump", "break largest", "run", "continue", "continue",
                               "continue", "continue", "info breakpoints", "continue"});
}

TEST_CASE("a temporary breakpoint with several locations reports Temporary breakpoint 1.1 as gdb does",
          "[cli][gdb-compare]") {
    // The temporary breakpoint goes with its first hit; a disabled location keeps its number.
    auto program = GENERATE(from_range(example_variants("cxx_features")));
    compare_with_gdb(program, {"tbreak geometry::area", "info breakpoints", "run", "info breakpoints",
                               "break geometry::area", "disable 2.1", "continue", "info breakpoints", "continue"});
}

TEST_CASE("threads hitting different locations of one breakpoint report Thread N name hit Breakpoint 1.2",
          "[cli][gdb-compare]") {
    auto program = GENERATE(from_range(app_target_variants("app_overload_threads")));
    // No run to the end: the program's last line can land inside gdb's "[Thread ... exited]".
    compare_with_gdb(program, {"break tally", "info breakpoints", "run", "continue", "info breakpoints", "kill"},
                     true);
    auto ours = ompdbg_cmds(program, {"break tally", "run", "continue", "continue"});
    INFO(ours.out);
    CHECK(ours.out.find("\nThread 2 \"tally-int\" hit Breakpoint 1.1, counting::tally (n=6) at ") !=
          std::string::npos);
    CHECK(ours.out.find("\nThread 3 \"tally-double\" hit Breakpoint 1.2, counting::tally (x=1.25) at ") !=
          std::string::npos);
}

TEST_CASE("set breakpoint pending on, off and auto behave as in gdb", "[cli][gdb-compare]") {
    // on: pending without a question; off: refused; auto: the question (ompdbg answers it
    // Y without a terminal, gdb N, so auto is checked on ompdbg's side only).
    auto program = example_path("structs");
    // (The tests run gdb with `-iex "set breakpoint pending on"`; ompdbg starts at auto.)
    std::vector<std::string> cmds{"set breakpoint pending on", "break nosuch",
                                  "show breakpoint pending", "set breakpoint pending off", "break nosuch2",
                                  "set breakpoint pending maybe", "info breakpoints"};
    compare_with_gdb(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO(ours.all() << "\ngdb:\n" << theirs.all());
    for (const char* l : {"Function \"nosuch\" not defined.", "Function \"nosuch2\" not defined.",
                          "\"on\", \"off\" or \"auto\" expected."}) {
        CHECK(has_line(theirs.err, l));
        CHECK(has_line(ours.err, l));
    }
    CHECK(ours.exit_code != 0);   // `break nosuch2` failed
    auto asked = ompdbg_cmds(program, {"show breakpoint pending", "break nosuch"});
    CHECK(has_line(asked.out, "Debugger's behavior regarding pending breakpoints is auto."));
    CHECK(has_line(asked.out, "Make breakpoint pending on future shared library load? (y or [n]) [answered Y; input "
                              "not from terminal]"));
    CHECK(has_line(asked.out, "Breakpoint 1 (nosuch) pending."));
}

TEST_CASE("FILE:LINE in an optimised OpenMP C++ loop: the file, address and info line of gdb, not of an inlined header",
          "[cli][gdb-compare]") {
    // g++ -O2 -fopenmp: the first rows of the body's lines share their address with rows of
    // inlined accessors (omp_vector_inline.hpp) and std::vector::operator[] (stl_vector.h).
    // gdb drops a file's rows at an address where another file's statement row follows, so
    // the lines slide to the first one with code of its own; every message names this file.
    const std::string program = example_path("omp_vector_inline");
    std::vector<std::string> cmds;
    for (const char* mark : {"body_node", "body_update", "body_sum"}) {
        cmds.push_back("break omp_vector_inline.cpp:" + std::to_string(example_line("omp_vector_inline.cpp", mark)));
    }
    cmds.push_back("info breakpoints");
    for (const char* mark : {"body_node", "body_update", "body_sum"}) {
        cmds.push_back("info line omp_vector_inline.cpp:" +
                       std::to_string(example_line("omp_vector_inline.cpp", mark)));
    }
    for (const char* c : {"info line main", "info line omp_vector_inline.hpp:9", "info line omp_vector_inline.cpp:999",
                          "run", "info line", "bt 1", "info breakpoints"}) {
        cmds.push_back(c);
    }
    // One OpenMP thread: the hit is reported the same way by both debuggers.
    auto opts = run_options().timeout_after(120s).set_env("OMP_NUM_THREADS", "1");
    auto args = ex_args(cmds);
    args.push_back(program);
    auto ours = ompdbg_batch(args, opts);
    auto theirs = gdb_batch(args, opts);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    auto prog = program_output(program);
    // The stop and frame lines are compared from " at FILE:LINE" on: gdb names gcc's
    // outlined body "_ZL5relaxR4meshi._omp_fn.0(void)" in frames, ompdbg without "(void)".
    auto located = [&](const std::string& out) {
        std::vector<std::string> keep;
        for (auto l : debugger_lines(out, prog)) {
            if (l.rfind("Breakpoint 1, ", 0) == 0 || l.rfind("#0  ", 0) == 0) {
                l = l.substr(std::min(l.size(), l.find(" at /")));
            }
            keep.push_back(l);
        }
        return joined(keep);
    };
    CHECK(located(ours.out) == located(theirs.out));
    CHECK(ours.out.find("stl_vector.h, line") == std::string::npos);
    CHECK(ours.out.find("omp_vector_inline.hpp, line") == std::string::npos);
}
