// Fast breakpoints (issue 21): dprintf lines formatted in the program by ompdbg's agent into
// a ring that ompdbg drains while the program runs and at every stop. Ground truth is the
// program's own (fast_loop: which thread makes which call, how many calls) and ompdbg's own
// printf of the same line at a stop (fast breakpoints off).

#include <catch2/catch.hpp>

#include "fast_common.hpp"
#include "transcript.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace ompdbg::test;
using namespace ompdbg::test::fast;

namespace {

/// The lines of `out` that match `re`, in order.
std::vector<std::smatch> matches(const std::string& out, const std::regex& re, std::vector<std::string>& keep) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        keep.push_back(line);
    }
    std::vector<std::smatch> found;
    for (const auto& l : keep) {
        std::smatch m;
        if (std::regex_match(l, m, re)) {
            found.push_back(m);
        }
    }
    return found;
}

}  // namespace

TEST_CASE("a dprintf formatted in the agent prints every line once in order in each thread with exact hit counts",
          "[e2e][fast][dprintf]") {
    const long n = 100000;
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "dprintf f,\"f %ld by %d\\n\",i,tid", "break tiny if x == 500", "run",
                    "info breakpoints", "continue"},
                   {std::to_string(n), "4"});
    INFO(r.err);
    REQUIRE_FALSE(r.timed_out);
    std::vector<std::string> lines;
    auto found = matches(r.out, std::regex(R"(f (\d+) by (\d))"), lines);
    CHECK(found.size() == static_cast<std::size_t>(n));
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    std::map<int, long> last;   // thread → last i it printed
    bool in_order = true, right_thread = true, once = true;
    for (const auto& m : found) {
        long i = std::stol(m[1].str());
        int tid = std::stoi(m[2].str());
        once = once && i >= 0 && i < n && seen[static_cast<std::size_t>(i)]++ == 0;
        right_thread = right_thread && i / (n / 4) == tid;   // the static schedule's chunks
        in_order = in_order && (!last.count(tid) || last[tid] < i);
        last[tid] = i;
    }
    CHECK(once);
    CHECK(right_thread);
    CHECK(in_order);
    CHECK(has_line(r.out, ground_truth(n, 4)));
    CHECK(has_line(r.out, "\tbreakpoint already hit 100000 times"));
    CHECK(has_line(r.out, "\tprinted in the target"));
    CHECK(has_line(r.out, "tiny sum 499500"));
}

TEST_CASE("the agent formats dprintf's conversions as ompdbg's printf does at a stop", "[e2e][fast][dprintf]") {
    const std::string format =
        "dprintf f,\"%d|%i|%u|%x|%lx|%lu|%ld|%c|%s|%p|%s|%p|100%%\\n\",tid,-tid,(unsigned)i,(unsigned)i*7,i*4096,"
        "(unsigned long)i,-i,'a'+tid,label,label,no_label,no_label";
    auto fast = debug(fast_loop("O0"), {"set breakpoint fast on", format, "run"}, {"2000", "2"});
    auto slow = debug(fast_loop("O0"), {format, "run"}, {"2000", "2"},
                      run_options().set_env("OMPDBG_FAST_BREAKPOINTS", "off"));
    INFO(fast.all());
    REQUIRE_FALSE(fast.timed_out);
    REQUIRE_FALSE(slow.timed_out);
    std::vector<std::string> a, b;
    std::regex line(R"(-?\d+\|.*\|100%)");
    auto fa = matches(fast.out, line, a);
    auto fb = matches(slow.out, line, b);
    std::vector<std::string> la, lb;
    for (const auto& m : fa) {
        la.push_back(m.str());
    }
    for (const auto& m : fb) {
        lb.push_back(m.str());
    }
    std::sort(la.begin(), la.end());
    std::sort(lb.begin(), lb.end());
    CHECK(la.size() == 2000);
    CHECK(la == lb);
    CHECK(grep(fast.out, "^0\\|0\\|10\\|46\\|a000\\|10\\|-10\\|a\\|loop\\|0x[0-9a-f]+\\|\\(null\\)\\|\\(nil\\)\\|100%$").size() == 1);
    CHECK(has_line(fast.out, ground_truth(2000, 2)));
}

TEST_CASE("a dprintf the agent cannot format is printed by ompdbg at a stop and info breakpoints says why",
          "[e2e][fast][dprintf]") {
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "dprintf f,\"i=%7.1f\\n\",(double)i", "break tiny if x == 500", "run",
                    "info breakpoints", "continue"},
                   {"3000", "2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(grep(r.out, "^i= *[0-9]+\\.0$").size() == 3000);
    CHECK(has_line(r.out, "i=   17.0"));
    CHECK(has_line(r.out, "\tprinted by the debugger: a conversion the agent does not format (%7.1f)"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 3000 times"));
    CHECK(has_line(r.out, ground_truth(3000, 2)));
}

TEST_CASE("a dprintf with an ignore count prints only the hits after it and the agent counts them", "[e2e][fast][dprintf]") {
    auto r = debug(fast_loop("O0"),
                   {"set breakpoint fast on", "dprintf f,\"call %ld\\n\",i", "ignore 1 1500", "run", "info breakpoints"},
                   {"4000", "1"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    auto printed = grep(r.out, "^call [0-9]+$");
    REQUIRE(printed.size() == 2500);
    CHECK(printed.front() == "call 1500");
    CHECK(printed.back() == "call 3999");
    CHECK(has_line(r.out, "\tbreakpoint already hit 4000 times"));
    CHECK(has_line(r.out, ground_truth(4000, 1)));
}

TEST_CASE("a dprintf of one thread and one sharing its address are printed by ompdbg and info breakpoints says why",
          "[e2e][fast][dprintf]") {
    auto r = debug(fast_loop("O0"),
                   {"dprintf f,\"y %ld\\n\",i", "break main", "run", "dprintf f thread 1,\"x %ld\\n\",i", "tbreak tiny",
                    "continue", "info breakpoints", "continue"},
                   {"400", "2"});
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(grep(r.out, "^y [0-9]+$").size() == 400);
    auto mine = grep(r.out, "^x [0-9]+$");   // thread 1 runs OpenMP thread 0's half: 0..199
    REQUIRE(mine.size() == 200);
    CHECK(mine.front() == "x 0");
    CHECK(mine.back() == "x 199");
    CHECK(has_line(r.out, "\tprinted by the debugger: another breakpoint at the same address"));
    CHECK(has_line(r.out, "\tprinted by the debugger: a dprintf of one thread"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 400 times"));
    CHECK(has_line(r.out, "\tbreakpoint already hit 200 times"));
    CHECK(has_line(r.out, ground_truth(400, 2)));
}

TEST_CASE("the agent formats flags, widths and precisions of dprintf's conversions as gdb's dprintf does",
          "[e2e][fast][dprintf][gdb]") {
    // Every integer conversion with flags, widths and precisions, 16- and 64-bit lengths,
    // %c, %s and %p padded and cut; at most 8 arguments a dprintf (the agent's limit), one
    // dprintf a run (two at one address are printed by ompdbg), one thread (same order).
    const std::vector<std::string> formats = {
        R"("<%5d|%-5d|%+d|% d|%05d|%.3d|%.0d|%8.4d>\n",tid-i,tid+i,tid-i,tid+i,tid-i,tid+i,(int)(i%2),i)",
        R"("<%-+6d|%i|%u|%7u|%-7u|%.4u|%o|%#o>\n",tid-i,-i,(unsigned)i,(unsigned)i,(unsigned)i,(unsigned)i,(unsigned)i,(unsigned)i)",
        R"("<%#.0o|%x|%#x|%X|%#10X|%08x|%-#8x|%#08x>\n",(unsigned)(i%2),(unsigned)i*7,(unsigned)i,(unsigned)i*11,(unsigned)i*13,(unsigned)i,(unsigned)i,(unsigned)i)",
        R"("<%ld|%-12ld|%+ld|%lu|%lld|%llu|%lx|%#lo>\n",i*4096-7000000000,-i,i,(unsigned long)i*3,i-50,(unsigned long long)i,i*65536,i)",
        R"("<%zu|%hd|%hu|%hx|%c|%3c|%-3c|%.5ld>\n",(unsigned long)i,(short)(i*700),(unsigned short)(i*700),(short)(i*9),'a'+(int)(i%26),'b','c',i)",
        R"("<%s|%8s|%-8s|%.2s|%8.3s|%s|%.3s|%10s>\n",label,label,label,label,label,no_label,no_label,no_label)",
        R"("<%p|%12p|%-12p|%p|%8p|%-8p|%%|%5.1s>\n",label,label,label,no_label,no_label,no_label,label)",
    };
    const std::vector<std::string> args{"300", "1"};
    auto lines = [](const std::string& out) {
        std::vector<std::string> keep, found;
        for (const auto& m : matches(out, std::regex(R"(<.*>)"), keep)) {
            found.push_back(m.str());
        }
        return found;
    };
    for (const auto& format : formats) {
        INFO(format);
        const std::string command = "dprintf f," + format;
        // Stopped at tiny (after every call of f): the listing says where the lines were made;
        // then the program ends (its own line is flushed at exit).
        auto ours = debug(fast_loop("O0"),
                          {"set breakpoint fast on", command, "tbreak tiny", "run", "info breakpoints", "continue"}, args);
        auto theirs = gdb_cmds(fast_loop("O0"), {command, "run"}, args);
        INFO(ours.all());
        INFO(theirs.all());
        REQUIRE_FALSE(ours.timed_out);
        REQUIRE_FALSE(theirs.timed_out);
        auto a = lines(ours.out);
        CHECK(a.size() == 300);
        CHECK(a == lines(theirs.out));
        CHECK(has_line(ours.out, "\tprinted in the target"));
        CHECK(has_line(ours.out, "\tbreakpoint already hit 300 times"));
        CHECK(has_line(ours.out, ground_truth(300, 1)));
        CHECK(has_line(theirs.out, ground_truth(300, 1)));
    }
}
