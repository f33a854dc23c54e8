// `step` into functions of shared libraries that have line information, as gdb 13 does: the
// C library (libc6-dbg) entered through PLT stubs and, on a first call, the dynamic
// linker's lazy-binding resolver; ifuncs (strlen, memcpy) entered in the implementation
// chosen for this CPU; functions whose source is not on disk ("No such file or directory."
// once, then "in FILE"); and a library of ours built with -g. Ground truth: gdb's
// transcript of the same commands on the same binary.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("step enters C library functions through their PLT stubs and the lazy resolver, as gdb does",
          "[cli][step]") {
    auto program = GENERATE(from_range(example_variants("libc_calls")));
    // strlen and malloc (bound lazily), memcpy (an ifunc), getpid then printf entered from
    // the middle of the caller's line after getpid returns, free; finish back each time.
    std::vector<std::string> cmds{"break " + example_location("libc_calls.c", "step_strlen"), "run",
                                  "step", "bt", "finish", "next",
                                  "step", "bt", "finish", "next",
                                  "step", "bt", "finish", "next",
                                  "step", "bt", "step", "step", "bt", "finish", "next",
                                  "step", "bt", "finish", "next", "next"};
    compare_with_gdb(program, cmds);
    // gdb says that a source file is missing on stderr, once for the lines that follow in
    // that file ("32\tin ./stdio-common/printf.c" is on stdout, compared above).
    auto missing = [](const std::string& err) {
        return joined(grep(err, R"(^\d+\t\S+: No such file or directory\.$)"));
    };
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    CHECK(grep(theirs.err, "printf.c: No such file or directory").size() == 1);
    CHECK(missing(ours.err) == missing(theirs.err));
}

TEST_CASE("step enters a function of a shared library of ours through its PLT stub, bound or not, as gdb does",
          "[cli][step]") {
    auto program = GENERATE(from_range(example_variants("linked_shlib")));
    compare_with_gdb(program, {"break " + example_location("shlib/linked_shlib.c", "call_square"), "run", "step",
                               "bt", "finish", "next", "step", "bt", "step", "step", "step", "step"});
}
