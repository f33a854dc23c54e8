// A software watchpoint on a variable that a system call writes (examples/watch_syscall.c:
// read(2) from a pipe into the watched `data.received`, and into its unwatched neighbour on
// the same page). The kernel does not fault in a write-protected page, it fails the call
// with EFAULT: the program's own output proves its calls succeeded, and the change is
// reported as gdb reports it, at the same instruction (the one after the call). Software
// mode is forced (debug registers do not trap on every machine).

#include "daily_common.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

TEST_CASE("watch: a read(2) into the watched page succeeds and the change is reported after the call, as gdb",
          "[cli][watch]") {
    auto program = example_path("watch_syscall");
    REQUIRE(program_output(program) ==
            std::vector<std::string>{"read neighbour 3: hi", "read received 4: 4242", "copied 4242"});
    std::vector<std::string> cmds{"set can-use-hw-watchpoints 0", "break main", "run", "watch data.received",
                                  "continue", "print $pc", "continue"};
    auto ours = ompdbg_cmds(program, cmds);
    auto gdb = gdb_cmds(program, cmds);
    CAPTURE(ours.all(), gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // The hit (gdb names the libc function by another alias, and shows its frame's address:
    // the pc is compared through `print $pc`), then the program's own lines.
    auto lines = [](const std::string& out) {
        std::vector<std::string> keep =
            grep(out, R"(^(Watchpoint 2: |Old value = |New value = |read |copied |\[Inferior 1 ))");
        std::smatch m;
        if (std::regex_search(out, m, std::regex(R"(\$1 = \(void \(\*\)\(\)\) (0x[0-9a-f]+))"))) {
            keep.push_back("pc " + m[1].str());
        }
        for (auto& l : keep) {
            l = std::regex_replace(l, std::regex(R"(\(process \d+\))"), "(process N)");
        }
        return keep;
    };
    auto expected = lines(gdb.out);
    REQUIRE(std::find(expected.begin(), expected.end(), "New value = 4242") != expected.end());
    CHECK(joined(lines(ours.out)) == joined(expected));
    CHECK(has_line(ours.out, "read received 4: 4242"));
    CHECK(has_line(ours.out, "read neighbour 3: hi"));
}
