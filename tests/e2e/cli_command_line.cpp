// ompdbg's command line as users type it (issue 17, item 5): every verb with `--` where a
// user puts it, gdb's order for a plain PROG (options after it, a core file or PID as the
// second word), and --args, each checked by what the program or gdb says.
#include "daily_common.hpp"

#include <catch2/catch.hpp>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::daily;

namespace {

/// `ompdbg ARGS...` exactly as given (no --batch added: some tests put it after PROG).
run_result ompdbg_argv(std::vector<std::string> args) {
    args.insert(args.begin(), ompdbg_binary);
    return run(std::move(args), run_options().timeout_after(60s));
}

/// structs calls factorial(4 + argc): the line a hit prints for the given argument count.
std::string factorial_hit(int args) {
    return "Breakpoint 1, factorial (n=" + std::to_string(5 + args) + ")";
}

}  // namespace

TEST_CASE("ompdbg run -- PROG ARGS: `--` ends ompdbg's options, the rest is the program's", "[cli]") {
    auto r = ompdbg_argv({"--batch", "-ex", "break factorial", "run", "--", example_path("structs"), "-ex", "b", "c"});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(r.out.find(factorial_hit(3)) != std::string::npos);
    CHECK(r.err.find("--: No such file") == std::string::npos);
    // Options of ours between `run` and the program, then the program without arguments.
    auto o = ompdbg_argv({"run", "--batch", "-ex", "break factorial", "--", example_path("structs")});
    INFO(o.all());
    CHECK(o.ok());
    CHECK(o.out.find(factorial_hit(0)) != std::string::npos);
    auto none = ompdbg_argv({"--batch", "run", "--"});
    CHECK(none.exit_code == 2);
    CHECK(has_line(none.err, "ompdbg: `run` needs a program: ompdbg run PROG [ARGS...]"));
}

TEST_CASE("options after a plain PROG are ompdbg's, as in gdb, and `--` before PROG or after it", "[cli]") {
    auto after = ompdbg_argv({example_path("structs"), "-ex", "break factorial", "-ex", "run", "--batch"});
    INFO(after.all());
    CHECK(after.ok());
    CHECK(after.out.find(factorial_hit(0)) != std::string::npos);
    auto before = ompdbg_argv({"--batch", "-ex", "break factorial", "-ex", "run", "--", example_path("structs"), "a", "b"});
    INFO(before.all());
    CHECK(before.ok());
    CHECK(before.out.find(factorial_hit(2)) != std::string::npos);
    auto behind = ompdbg_argv({"--batch", example_path("structs"), "-ex", "break factorial", "-ex", "run", "--", "-x", "y", "z"});
    INFO(behind.all());
    CHECK(behind.ok());
    CHECK(behind.out.find(factorial_hit(3)) != std::string::npos);
    // --args keeps everything after PROG, even words that are our options.
    auto args = ompdbg_argv({"--batch", "-ex", "show args", "--args", example_path("structs"), "-x", "y"});
    INFO(args.all());
    CHECK(args.ok());
    CHECK(has_line(args.out, "Argument list to give program being debugged when it is started is \"-x y\"."));
}

TEST_CASE("ompdbg PROG CORE opens the core as gdb PROG CORE does, and excess words are ignored as in gdb", "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {"segv"}, dir.path()).string();
    auto ours = ompdbg_argv({"--batch", "-ex", "bt", "-ex", "print global_counter", program, core});
    auto gdb = gdb_batch({"-ex", "bt", "-ex", "print global_counter", program, core});
    CAPTURE(ours.all(), gdb.all());
    CHECK(ours.ok());
    auto expected = gdb_core_lines(gdb.out);
    REQUIRE(expected.size() >= 2);
    CHECK(joined(nonempty_lines(ours.out)) == joined(expected));
    // A third and fourth word: gdb names the first ignored one; the core is a missing file.
    auto o = ompdbg_argv({"--batch", program, "/nonexistent-core", "extra", "more"});
    auto g = gdb_batch({program, "/nonexistent-core", "extra", "more"});
    CAPTURE(o.all(), g.all());
    for (const char* l : {"Excess command line arguments ignored. (extra ...)", "/nonexistent-core: No such file or directory."}) {
        CHECK(has_line(g.err, l));
        CHECK(has_line(o.err, l));
    }
}

TEST_CASE("ompdbg PROG PID attaches to the process as gdb PROG PID does", "[cli]") {
    background_process prog({example_path("counter")});
    REQUIRE(prog.wait_for_line(std::regex("^counter 3$"), 30s));
    auto r = ompdbg_argv({"--batch", "-ex", "info inferiors", "-ex", "detach", example_path("counter"),
                          std::to_string(prog.pid())});
    INFO(r.all());
    CHECK(r.ok());
    CHECK(has_line(r.out, "[Inferior 1 (process " + std::to_string(prog.pid()) + ") detached]"));
    auto status = run({"grep", "TracerPid", "/proc/" + std::to_string(prog.pid()) + "/status"});
    CHECK(status.out == "TracerPid:\t0\n");
}
