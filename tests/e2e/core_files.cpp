// Post-mortem debugging: `ompdbg core PROG CORE` on cores the tests produce themselves
// (the kernel's, or gdb's gcore when core_pattern pipes cores away), compared with gdb's
// answer on the same core; and the bad inputs (core of another program, truncated core,
// core of another architecture, not a core).

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::daily;

namespace {

/// The lines of ompdbg's and gdb's answers, each without what only one of them prints.
void check_same_as_gdb(const std::string& program, const std::string& core, const std::vector<std::string>& cmds) {
    auto ours = ompdbg_core(program, core, cmds);
    auto gdb = gdb_core(program, core, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    auto expected = gdb_core_lines(gdb.out);
    REQUIRE(expected.size() >= cmds.size());
    CHECK(joined(nonempty_lines(ours.out)) == joined(expected));
}

}  // namespace

TEST_CASE("core: a SIGSEGV core shows the signal, the crash frame, bt, locals, memory as gdb", "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {"segv"}, dir.path()).string();
    check_same_as_gdb(program, core,
                      {"bt", "info threads", "print global_counter", "print where", "info locals", "print *&where",
                       "x/2i $pc", "x/4xb &global_counter", "frame 1", "info locals", "print argc", "up", "down",
                       "info sharedlibrary", "print $pc"});
}

TEST_CASE("core: every thread of a multi-threaded core, in gdb's numbering", "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {"threads"}, dir.path()).string();
    // Thread 1 is the one that crashed (the first NT_PRSTATUS), as in gdb.
    std::vector<std::string> cmds{"bt", "thread", "thread apply all bt", "print id", "thread 2", "frame"};
    auto ours = ompdbg_core(program, core, cmds);
    auto gdb = gdb_core(program, core, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.term_signal == 0);
    // The crash report, the thread list and the crashing thread's stack agree with gdb.
    auto head = [](const std::vector<std::string>& lines) {
        std::vector<std::string> out;
        for (auto& l : lines) {
            if (l.rfind("[New LWP", 0) == 0 || l.rfind("Core was generated", 0) == 0 ||
                l.rfind("Program terminated", 0) == 0 || l.rfind("[Current thread", 0) == 0 ||
                l.rfind("Thread ", 0) == 0 || l.rfind("$1", 0) == 0 || l.rfind("[Switching", 0) == 0) {
                out.push_back(l);
            }
        }
        return out;
    };
    CHECK(joined(head(nonempty_lines(ours.out))) == joined(head(gdb_core_lines(gdb.out))));
    CHECK(has_line(ours.out, "$1 = 2"));
    CHECK(has_line(ours.out, "Program terminated with signal SIGSEGV, Segmentation fault."));
    CHECK(count_lines_starting(ours.out, "[New LWP ") == 4);
    int crash_line = example_line("crash.c", "worker_crash");
    CHECK(ours.out.find("#0  worker (arg=0x2) at ") != std::string::npos);
    CHECK(ours.out.find("crash.c:" + std::to_string(crash_line)) != std::string::npos);
}

TEST_CASE("core: SIGFPE, SIGBUS and SIGABRT cores name their signal and frame", "[cli][core]") {
    auto mode = GENERATE(std::string("fpe"), std::string("bus"), std::string("abrt"));
    CAPTURE(mode);
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {mode}, dir.path()).string();
    std::vector<std::string> cmds{"bt"};
    auto ours = ompdbg_core(program, core, cmds);
    auto gdb = gdb_core(program, core, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // The program's own frames, without the frame numbers: inside libc gdb also shows
    // inlined frames of libc's separate debug info (abort's __pthread_kill_internal).
    auto frames = [](const std::string& out) {
        std::vector<std::string> keep;
        for (auto& l : lines_of(out)) {
            if (l.rfind("Program terminated", 0) == 0) {
                keep.push_back(l);
            } else if (l.rfind("#", 0) == 0 && l.find("crash.c:") != std::string::npos) {
                keep.push_back(l.substr(l.find(' ')));
            }
        }
        return keep;
    };
    auto expected = frames(gdb.out);
    REQUIRE(expected.size() >= 2);
    CHECK(joined(frames(ours.out)) == joined(expected));
    std::string mark = mode == "abrt" ? "abrt" : mode;
    CHECK(ours.out.find("crash.c:" + std::to_string(example_line("crash.c", mark))) != std::string::npos);
}

TEST_CASE("core: commands that need a live process say so in one line", "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {"segv"}, dir.path()).string();
    for (std::string cmd : {"continue", "next", "step", "finish", "kill", "detach", "stepi"}) {
        CAPTURE(cmd);
        auto r = ompdbg_core(program, core, {cmd, "echo alive\\n"});
        CHECK(r.term_signal == 0);
        CHECK(r.err.find("The program is not being run.") != std::string::npos);
        CHECK(r.out.find("alive") != std::string::npos);
    }
    // Writing memory of a core fails as in gdb (the address is the variable's).
    auto w = ompdbg_core(program, core, {"set var global_counter = 1", "print global_counter"});
    CHECK(w.err.find("Cannot access memory at address 0x") != std::string::npos);
    CHECK(has_line(w.out, "$1 = 42"));
}

TEST_CASE("core: a core of another program warns that they do not match", "[cli][core]") {
    scratch_dir dir;
    auto core = make_crash_core(example_path("crash"), {"segv"}, dir.path()).string();
    auto r = ompdbg_core(example_path("structs"), core, {"bt", "echo alive\\n"});
    CAPTURE(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.err.find("warning: core file may not match specified executable file.") != std::string::npos);
    CHECK(r.out.find("alive") != std::string::npos);
    // The right program gives no such warning.
    auto ok = ompdbg_core(example_path("crash"), core, {"bt"});
    CHECK(ok.err.find("may not match") == std::string::npos);
}

TEST_CASE("core: a truncated core opens with bfd's warning and never crashes", "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    auto core = make_crash_core(program, {"segv"}, dir.path());
    auto size = std::filesystem::file_size(core);
    for (std::uintmax_t keep : {size / 2, std::uintmax_t{6000}, std::uintmax_t{100}}) {
        CAPTURE(keep);
        auto cut = dir.path() / ("cut-" + std::to_string(keep));
        std::filesystem::copy_file(core, cut);
        std::filesystem::resize_file(cut, keep);
        auto r = ompdbg_core(program, cut.string(), {"bt", "info threads", "print global_counter", "x/4xb $sp",
                                                      "echo alive\\n"});
        CAPTURE(r.all());
        CHECK(r.term_signal == 0);
        CHECK_FALSE(r.timed_out);
        bool warned = r.err.find(" is truncated: expected core file size >= ") != std::string::npos;
        bool refused = r.err.find("truncated core file") != std::string::npos ||
                       r.err.find("no thread in the core file") != std::string::npos;
        CHECK((warned || refused));
    }
}

TEST_CASE("core: a core of another architecture and files that are not cores are refused in one line",
          "[cli][core]") {
    scratch_dir dir;
    auto program = example_path("crash");
    // A 64-byte ELF header of an AArch64 core (ET_CORE, EM_AARCH64) is enough to be told apart.
    auto arm = dir.path() / "aarch64.core";
    {
        unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
        h[16] = 4;    // ET_CORE
        h[18] = 183;  // EM_AARCH64
        h[20] = 1;    // EV_CURRENT
        h[52] = 64;   // e_ehsize
        h[54] = 56;   // e_phentsize
        std::ofstream(arm, std::ios::binary).write(reinterpret_cast<char*>(h), sizeof h);
    }
    auto r = ompdbg_core(program, arm.string(), {});
    CAPTURE(r.all());
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("another architecture (aarch64)") != std::string::npos);

    for (std::string not_core : {std::string("/etc/passwd"), program}) {
        CAPTURE(not_core);
        auto n = ompdbg_core(program, not_core, {});
        CHECK(n.term_signal == 0);
        CHECK(n.exit_code != 0);
        CHECK(n.err.find("\"" + not_core + "\" is not a core dump: file format not recognized") != std::string::npos);
    }
    auto missing = ompdbg_core(program, (dir.path() / "nothing").string(), {});
    CHECK(missing.exit_code != 0);
    CHECK(missing.err.find("nothing: No such file or directory.") != std::string::npos);
}
