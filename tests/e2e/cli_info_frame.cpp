// `info frame` in every kind of frame (normal, inlined, a signal handler's trampoline, an
// outlined OpenMP region in a worker thread), `$_siginfo` in gdb's own layout, and `set var`
// on registers and bitfields: against gdb 13 on the same binaries.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

/// The lines both debuggers print about the stop and the frames, without thread events
/// (LWPs differ), the program's output and lines matching `drop` (std::regex_search).
/// `any_thread`: which OS thread (its number, its stack) serves a given OpenMP thread
/// differs from run to run, so thread numbers and stack addresses are compared as such.
std::string frame_lines(const std::string& out, const std::string& drop = "", bool any_thread = false) {
    static const std::regex stack_address(R"(0x7fff[0-9a-f]{8})"), thread_number(R"(Thread \d+ )");
    std::vector<std::string> keep;
    for (auto l : debugger_lines(out)) {
        // A thread event cut in two by the program's output: its head starts with "[".
        if (thread_event_tail(l)) {
            continue;
        }
        if (any_thread) {
            l = std::regex_replace(std::regex_replace(l, stack_address, "0x7fff(stack)"), thread_number, "Thread N ");
        }
        if (l.rfind("[", 0) == 0 || l.rfind("truth:", 0) == 0 || l.rfind("OMP_OMPD", 0) == 0 ||
            l.rfind("crash:", 0) == 0 || l.rfind("handler:", 0) == 0) {
            continue;
        }
        if (!drop.empty() && std::regex_search(l, std::regex(drop))) {
            continue;
        }
        keep.push_back(l);
    }
    return joined(keep);
}

void compare_frames(const std::string& program, const std::vector<std::string>& cmds,
                    const std::vector<std::string>& args = {}, const std::string& drop = "",
                    bool any_thread = false) {
    auto ours = ompdbg_cmds(program, cmds, args);
    auto theirs = gdb_cmds(program, cmds, args);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    CHECK(frame_lines(ours.out, drop, any_thread) == frame_lines(theirs.out, drop, any_thread));
}

std::string openmp_example(const std::string& name) { return std::string(examples_dir) + "/openmp/" + name; }

/// The number of the first line of an example's source that contains `text` (0: none).
int line_with(const std::string& source, const std::string& text) {
    std::ifstream in(std::string(examples_source_dir) + "/" + source);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n) {
        if (l.find(text) != std::string::npos) {
            return n;
        }
    }
    return 0;
}

}  // namespace

TEST_CASE("info frame in a normal frame and its caller prints what gdb prints", "[cli][frames][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("structs")));
    compare_frames(program, {"break factorial", "run", "info frame", "continue", "up", "info frame", "up",
                             "info frame"});
}

TEST_CASE("info frame in inlined frames says inlined into frame N, as gdb", "[cli][frames][gdb-compare]") {
    auto program = GENERATE(from_range(example_variants("optimized", 2)));
    compare_frames(program, {"break square", "run", "info frame", "up", "info frame", "up", "info frame"});
}

TEST_CASE("info frame in a signal handler and in its <signal handler called> frame prints what gdb prints",
          "[cli][frames][gdb-compare]") {
    // gdb prints handle's table only when typed at a terminal; ompdbg in batch mode too.
    compare_frames(example_path("crash"),
                   {"handle SIGUSR1 nostop noprint", "break on_usr1", "run", "info frame", "up", "info frame",
                    "frame", "down"},
                   {"usr1"}, "^Signal |^SIGUSR1 ");
}

TEST_CASE("info frame in an outlined OpenMP region on a worker thread prints what gdb prints",
          "[cli][frames][ompd][gdb-compare]") {
    auto program = openmp_example("omp_nested");
    if (!std::filesystem::exists(program)) {
        WARN("OpenMP examples not built: skipped");
        return;
    }
    int line = line_with("openmp/omp_nested.c", "if (outer == 0 && inner == 0)");
    REQUIRE(line > 0);
    compare_frames(program, {"break omp_nested.c:" + std::to_string(line) + " if outer == 1 && inner == 1", "run",
                             "info frame", "up", "info frame"},
                   {}, "", true);
}

TEST_CASE("$_siginfo after a signal has gdb's layout and fields", "[cli][frames][gdb-compare]") {
    compare_frames(example_path("crash"),
                   {"run", "print $_siginfo", "print $_siginfo.si_signo", "print $_siginfo._sifields._sigfault.si_addr",
                    "print/x $_siginfo._sifields._sigfault", "ptype $_siginfo.si_code"},
                   {"segv"});
}

TEST_CASE("$_siginfo at a breakpoint stop is the breakpoint's SIGTRAP, as gdb reads it from the kernel",
          "[cli][frames][gdb-compare]") {
    auto ours = ompdbg_cmds(example_path("structs"), {"break factorial", "run", "print $_siginfo.si_signo"});
    INFO(ours.all());
    CHECK(has_line(ours.out, "$1 = 5"));
    compare_frames(example_path("structs"),
                   {"break factorial", "run", "print $_siginfo.si_signo", "print $_siginfo.si_code", "print $_siginfo",
                    "print $_siginfo._sifields._sigfault.si_addr", "stepi", "print $_siginfo.si_code"});
}

TEST_CASE("a value that does not fit a bitfield is stored truncated with gdb's warning, and a negative one that fits "
          "and a signed field's unsigned spelling are stored without one",
          "[cli][frames][gdb-compare]") {
    std::vector<std::string> cmds{"break factorial", "run", "set var global_flags.mode = 9", "print global_flags",
                                  "set var global_flags.delta = 8", "print global_flags.delta",
                                  "set var global_flags.delta = -9", "print global_flags.delta",
                                  "set var global_flags.delta = -8", "set var global_flags.ready = 2",
                                  "print global_flags.ready = 3", "print global_flags.mode = -1",
                                  "print global_flags.rest = 0x1ffffff", "print global_flags.mode += 5",
                                  "print global_flags"};
    auto program = example_path("structs");
    compare_frames(program, cmds);
    auto ours = ompdbg_cmds(program, cmds);
    auto theirs = gdb_cmds(program, cmds);
    INFO("ompdbg:\n" << ours.all() << "\ngdb:\n" << theirs.all());
    auto warnings = [](const std::string& err) {
        std::vector<std::string> w;
        for (const auto& l : lines_of(err)) {
            if (l.rfind("warning: Value does not fit", 0) == 0) {
                w.push_back(l);
            }
        }
        return joined(w);
    };
    CHECK(has_line(ours.err, "warning: Value does not fit in 3 bits."));
    CHECK(has_line(ours.err, "warning: Value does not fit in 24 bits."));
    CHECK(warnings(ours.err) == warnings(theirs.err));
    CHECK(has_line(ours.out, "$1 = {ready = 1, mode = 1, delta = -3, rest = 1000}"));
}

TEST_CASE("set var on registers ($rax, $eax, $al, $pc) and on bitfields changes what gdb changes",
          "[cli][frames][gdb-compare]") {
    // gcc -O0: factorial+16 is the instruction after the one the breakpoint stops at.
    compare_frames(example_path("structs"), {"break factorial", "run", "set var $rax = 5", "print $rax", "set var $eax = -1",
                             "print $rax", "set var $al = 7", "print/x $rax", "set var global_flags.mode = 6",
                             "set var global_flags.delta = -7", "set var global_flags.rest = 123456",
                             "print global_flags", "set var $pc = factorial+16", "print $pc", "x/i $pc",
                             "info frame", "set var $pc = factorial+12", "frame"});
}
