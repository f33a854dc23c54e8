// OpenMP through DMPL, end to end: `ompdbg --batch` on the examples/dmpl programs (the DMPL
// paper's Fig. 8 with clang TLS, clang -fnoopenmp-use-tls and gcc; a C++ class-type
// threadprivate; data-sharing clauses), checked against what each program prints about
// itself; and every bad input of issue 5 (broken DMPL libraries built by the tests, a
// variable that is not threadprivate, a thread without its copy yet).

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
namespace fs = std::filesystem;

namespace {

std::string dmpl_example(const std::string& name) {
    return std::string(examples_dir) + "/dmpl/" + name;
}

bool have_dmpl_examples() {
    if (!fs::exists(dmpl_example("fig8_notls-clang-dwarf5-O0"))) {
        WARN("skipped: examples/dmpl not built (no libomp in the bootstrap cache; run scripts/bootstrap)");
        return false;
    }
    return true;
}

std::string fake_dmpl(const std::string& variant) {
    return std::string(dmpl_fakes_dir) + "/libfake-dmpl-" + variant + ".so";
}

run_result ompdbg_on(const std::string& program, const std::vector<std::string>& cmds,
                     std::vector<std::string> options = {}) {
    std::vector<std::string> args = std::move(options);
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    args.push_back(program);
    return ompdbg_batch(args, run_options().timeout_after(120s));
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

/// The program's "id=X, i=I, <what>= V" lines: i → (id, V).
std::map<int, std::pair<int, int>> program_lines(const std::string& out, const std::string& what) {
    std::map<int, std::pair<int, int>> m;
    std::regex re("id=(\\d+), i=(\\d+), " + what + "= ?(\\d+)");
    for (const auto& l : lines_of(out)) {
        std::smatch s;
        if (std::regex_search(l, s, re)) {
            m[std::stoi(s[2])] = {std::stoi(s[1]), std::stoi(s[3])};
        }
    }
    return m;
}

/// Each OpenMP thread's last printed count (what its threadprivate holds at the end).
std::vector<int> final_counts(const std::map<int, std::pair<int, int>>& lines) {
    std::map<int, int> by_id;
    for (const auto& [i, iv] : lines) {
        by_id[iv.first] = std::max(by_id[iv.first], iv.second);
    }
    std::vector<int> v;
    for (const auto& [id, n] : by_id) {
        v.push_back(n);
    }
    std::sort(v.begin(), v.end());
    return v;
}

/// The rows of `omp threadprivate`: (current?, address, value text).
struct tp_row {
    bool current = false;
    std::string lwp, omp, address, value;
};
std::vector<tp_row> tp_rows(const std::string& segment) {
    std::vector<tp_row> rows;
    std::regex re(R"(^([* ]) (\d+)\s+(\d+)\s+(\S+)\s+(0x[0-9a-f]+)?\s*(.*)$)");
    bool in_table = false;
    for (const auto& l : lines_of(segment)) {
        if (l.find("Id   LWP") != std::string::npos && l.find("Address") != std::string::npos) {
            in_table = true;
            continue;
        }
        std::smatch m;
        if (in_table && std::regex_match(l, m, re)) {
            rows.push_back({m[1] == "*", m[3], m[4], m[5], m[6]});
        } else if (in_table) {
            in_table = false;
        }
    }
    return rows;
}

std::vector<std::string> segments(const std::string& out, const std::string& marker) {
    std::vector<std::string> seg;
    std::size_t pos = 0;
    while (true) {
        auto next = out.find(marker, pos);
        seg.push_back(out.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
        if (next == std::string::npos) {
            break;
        }
        pos = next + marker.size();
    }
    return seg;
}

std::optional<std::string> history_value(const std::string& segment, int nth) {
    std::regex re(R"(^\$\d+ = (.*)$)");
    int n = 0;
    for (const auto& l : lines_of(segment)) {
        std::smatch m;
        if (std::regex_match(l, m, re) && n++ == nth) {
            return m[1].str();
        }
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("Fig. 8: print a, print &a and omp threadprivate a in foo match what each thread printed",
          "[dmpl][threadprivate]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto program = GENERATE(std::string("fig8-gcc-dwarf5-O0"), std::string("fig8-clang-dwarf5-O0"),
                            std::string("fig8_notls-clang-dwarf5-O0"));
    INFO(program);
    std::vector<std::string> cmds{"break " + example_location("dmpl/fig8.c", "fig8-return"), "run"};
    // A thread's hit may be reported on a later continue (gdb does the same): continue more
    // often than there are iterations; commands after the exit fail harmlessly.
    for (int stop = 0; stop < 30; ++stop) {
        cmds.insert(cmds.end(), {"echo @@stop\\n", "print i", "print a", "print &a", "omp threadprivate a", "bt",
                                 "continue"});
    }
    auto r = ompdbg_on(dmpl_example(program), cmds);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.term_signal == 0);
    auto printed = program_lines(r.out, "a");
    REQUIRE(printed.size() == 10);  // the program ran to its end under the debugger
    auto segs = segments(r.out, "@@stop");
    std::map<int, std::string> address_of_id;
    std::set<int> stopped_at;
    const int pragma = example_line("dmpl/fig8.c", "fig8-pragma");
    for (std::size_t k = 1; k < segs.size(); ++k) {
        const std::string& seg = segs[k];
        INFO("stop " << k << ":\n" << seg);
        auto i = history_value(seg, 0);
        auto a = history_value(seg, 1);
        auto addr = history_value(seg, 2);
        if (seg.find("#0  foo (i=") == std::string::npos) {
            continue;  // after the exit (`print` then reads the file)
        }
        REQUIRE(i);
        REQUIRE(a);
        REQUIRE(addr);
        stopped_at.insert(std::stoi(*i));
        auto [id, count] = printed.at(std::stoi(*i));
        // The stopped thread has printed its line: its copy holds what it printed.
        CHECK(std::stoi(*a) == count);
        std::smatch m;
        REQUIRE(std::regex_search(*addr, m, std::regex(R"(\(int \*\) (0x[0-9a-f]+))")));
        std::string address = m[1];
        // One copy per OpenMP thread: the same thread always shows the same address, two
        // threads never the same one.
        if (address_of_id.count(id)) {
            CHECK(address_of_id[id] == address);
        }
        address_of_id[id] = address;
        auto rows = tp_rows(seg);
        REQUIRE(rows.size() >= 4);
        int current = 0;
        for (const auto& row : rows) {
            if (row.current) {
                ++current;
                CHECK(row.address == address);
                CHECK(row.value == *a);
                CHECK(row.omp == std::to_string(id));  // OMPD's thread number, or libgomp's
            }
        }
        CHECK(current == 1);
        // bt: the runtime folded into one line naming the construct; main follows it in the
        // thread that encountered the construct (OpenMP thread 0). A worker's stack ends
        // there: the encountering thread's frames are `omp bt continued`'s (issue 17).
        std::string region = "[omp parallel in main at fig8.c:" + std::to_string(pragma);
        auto at = seg.find(region);
        REQUIRE(at != std::string::npos);
        CHECK(seg.find(region + ", thread " + std::to_string(id) + " of 4]") != std::string::npos);
        CHECK((seg.find(" main (", at) != std::string::npos) == (id == 0));
        CHECK(seg.find("__kmp") == std::string::npos);
        CHECK(seg.find("GOMP_parallel") == std::string::npos);
        CHECK(seg.find("start_thread") == std::string::npos);
    }
    CHECK(stopped_at.size() == 10);  // every iteration's stop was examined
    std::set<std::string> distinct;
    for (const auto& [id, a] : address_of_id) {
        distinct.insert(a);
    }
    CHECK(distinct.size() == address_of_id.size());
}

TEST_CASE("Fig. 8: at the end of main, every thread's a is the count it printed last", "[dmpl][threadprivate]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto program = GENERATE(std::string("fig8-gcc-dwarf5-O0"), std::string("fig8-clang-dwarf5-O0"),
                            std::string("fig8_notls-clang-dwarf5-O0"));
    INFO(program);
    auto r = ompdbg_on(dmpl_example(program), {"break " + example_location("dmpl/fig8.c", "fig8-end"), "run",
                                               "omp threadprivate a"});
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    auto counts = final_counts(program_lines(r.out, "a"));
    REQUIRE(counts.size() == 4);
    std::vector<int> shown;
    for (const auto& row : tp_rows(r.out)) {
        shown.push_back(std::stoi(row.value));
    }
    std::sort(shown.begin(), shown.end());
    INFO(r.out);
    // The pool's four threads (the initial one included) keep their copies after the region.
    CHECK(shown == counts);
}

TEST_CASE("a C++ class-type threadprivate object: every thread's copy", "[dmpl][threadprivate]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto program = GENERATE(std::string("tp_class-gcc-dwarf5-O0"), std::string("tp_class-clang-dwarf5-O0"),
                            std::string("tp_class_notls-clang-dwarf5-O0"));
    INFO(program);
    // In record(): the stopped thread's copy holds what it printed.
    auto r = ompdbg_on(dmpl_example(program), {"break " + example_location("dmpl/tp_class.cpp", "tp-class-return"),
                                               "run", "print i", "print tally"});
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    INFO(r.out);
    auto printed = program_lines(r.out, "hits");
    auto i = history_value(r.out, 0);
    auto tally = history_value(r.out, 1);
    REQUIRE(i);
    REQUIRE(tally);
    auto [id, hits] = printed.at(std::stoi(*i));
    CHECK(*tally == "{hits_ = " + std::to_string(hits) + ", owner_ = " + std::to_string(id) + "}");
    // At the end of main: every thread's copy holds its last count.
    auto end = ompdbg_on(dmpl_example(program), {"break " + example_location("dmpl/tp_class.cpp", "tp-class-end"),
                                                 "run", "omp threadprivate tally"});
    REQUIRE_FALSE(end.timed_out);
    CHECK(end.exit_code == 0);
    INFO(end.out);
    auto all = program_lines(end.out, "hits");
    REQUIRE(all.size() == 8);
    std::vector<int> shown;
    for (const auto& row : tp_rows(end.out)) {
        std::smatch m;
        REQUIRE(std::regex_search(row.value, m, std::regex(R"(hits_ = (\d+))")));
        shown.push_back(std::stoi(m[1]));
    }
    std::sort(shown.begin(), shown.end());
    CHECK(shown == final_counts(all));
}

TEST_CASE("a thread that has not allocated its copy yet says so, later it has one", "[dmpl][threadprivate]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto r = ompdbg_on(dmpl_example("tp_unallocated-clang-dwarf5-O0"),
                       {"break checkpoint_first", "run", "omp threadprivate a", "thread 2", "print a",
                        "break checkpoint_second", "continue", "print a", "print &a"});
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.term_signal == 0);
    INFO(r.out << r.err);
    CHECK(r.out.find("<not allocated yet (DMPL_tls_unallocated)>") != std::string::npos);
    CHECK(r.err.find("Thread 2 has not allocated its copy of threadprivate `a' yet (DMPL_tls_unallocated)") !=
          std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(thread 1 a=43 at (0x[0-9a-f]+))")));
    std::string where = m[1];
    CHECK(r.out.find("$1 = 43") != std::string::npos);
    CHECK(r.out.find("$2 = (int *) " + where) != std::string::npos);
}

TEST_CASE("info locals in an outlined region: source names and data-sharing scoping", "[dmpl][locals]") {
    if (!have_dmpl_examples()) {
        return;
    }
    const std::vector<std::string> cmds{"break " + example_location("dmpl/clauses.c", "clauses-region"), "run",
                                        "info locals", "delete",
                                        "break " + example_location("dmpl/clauses.c", "clauses-loop"), "continue",
                                        "info locals"};
    for (std::string compiler : {"clang", "gcc"}) {
        DYNAMIC_SECTION(compiler) {
            auto r = ompdbg_on(dmpl_example("clauses-" + compiler + "-dwarf5-O0"), cmds);
            REQUIRE_FALSE(r.timed_out);
            INFO(r.all());
            CHECK(r.exit_code == 0);
            auto loop_at = r.out.find("LINE-MARK: clauses-loop");
            REQUIRE(loop_at != std::string::npos);
            std::string region = r.out.substr(0, loop_at), loop = r.out.substr(loop_at);
            CHECK(region.find("\nsh = 1  (shared)\n") != std::string::npos);
            CHECK(std::regex_search(region, std::regex(R"(\npr = 1[01]  \(private\)\n)")));
            // red = fp + pr + tp of this thread (3 + 10..11 + 5): its reduction copy, told
            // from a private one by the code (clang: its address in __kmpc_reduce_nowait's
            // list; gcc: combined with a lock-prefixed add on the pragma's line).
            CHECK(std::regex_search(region, std::regex(R"(\nred = 1[89]  \(reduction\)\n)")));
            // In the worksharing loop, after `lp = i`: lp is the thread's copy (0-3; the program
            // stops after assigning it), stored back by the last iteration.
            CHECK(std::regex_search(loop, std::regex(R"(\nlp = [0-3]  \(lastprivate\)\n)")));
            if (compiler == "clang") {
                CHECK(region.find("\nfp = 3  (firstprivate)\n") != std::string::npos);
                CHECK(region.find("\nlp = 4  (shared)\n") != std::string::npos);
                // Only the stop line shows the outlined routine's own parameters.
                CHECK_FALSE(std::regex_search(r.out, std::regex(R"((^|\n)\.(global_tid|bound_tid|omp)[^\n]* = )")));
            } else {
                // gcc's code for a firstprivate copy is that of a shared variable the region only
                // reads: no scoping is claimed.
                CHECK(region.find("\nfp = 3\n") != std::string::npos);
                CHECK(region.find("\nlp = 4  (shared)\n") != std::string::npos);
                CHECK_FALSE(std::regex_search(r.out, std::regex(R"((^|\n)\.omp_data_i = )")));
            }
        }
    }
}

TEST_CASE("info locals tells several reduction copies, a firstprivate array and private data apart", "[dmpl][locals]") {
    if (!have_dmpl_examples()) {
        return;
    }
    for (std::string compiler : {"clang", "gcc"}) {
        DYNAMIC_SECTION(compiler) {
            auto r = ompdbg_on(dmpl_example("reductions-" + compiler + "-dwarf5-O0"),
                               {"break " + example_location("dmpl/reductions.c", "reductions-region"), "run",
                                "info locals", "delete", "continue"});
            REQUIRE_FALSE(r.timed_out);
            INFO(r.all());
            CHECK(r.exit_code == 0);
            // Each thread's copies after one pass: r1 = inner = ro + fa[1], r2 = 1 * 2, fsum = 0.5;
            // the program's own line then shows the combined values of the 2 threads.
            CHECK(r.out.find("\ninner = 9  (private)\n") != std::string::npos);
            CHECK(r.out.find("\nr1 = 9  (reduction)\n") != std::string::npos);
            CHECK(r.out.find("\nr2 = 2  (reduction)\n") != std::string::npos);
            CHECK(r.out.find("\nfsum = 0.5  (reduction)\n") != std::string::npos);
            CHECK(r.out.find("r1=18 r2=4 lp=3 fsum=1") != std::string::npos);
            if (compiler == "clang") {
                CHECK(r.out.find("\nfa = {1, 2, 3}  (firstprivate)\n") != std::string::npos);
                CHECK(r.out.find("\nro = 7  (shared)\n") != std::string::npos);
            } else {
                // gcc copies both into locals from .omp_data_i alike: no scoping claimed.
                CHECK(r.out.find("\nfa = {1, 2, 3}\n") != std::string::npos);
                CHECK(r.out.find("\nro = 7\n") != std::string::npos);
            }
        }
    }
}

TEST_CASE("omp info names the DMPL library and its version string", "[dmpl]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto loc = example_location("dmpl/fig8.c", "fig8-return");
    auto clang = ompdbg_on(dmpl_example("fig8-clang-dwarf5-O0"), {"break " + loc, "run", "omp info"});
    CHECK(clang.exit_code == 0);
    CHECK(clang.out.find("DMPL version string: ompdbg DMPL library for LLVM libomp") != std::string::npos);
    CHECK(clang.out.find("libdmpl-libomp.so") != std::string::npos);
    CHECK(clang.out.find("OMPD library:") != std::string::npos);
    auto gcc = ompdbg_on(dmpl_example("fig8-gcc-dwarf5-O0"), {"break " + loc, "run", "omp info"});
    CHECK(gcc.exit_code == 0);
    CHECK(gcc.out.find("DMPL version string: ompdbg DMPL library for GNU libgomp") != std::string::npos);
    CHECK(gcc.out.find("OMPD:                not available") != std::string::npos);
}

TEST_CASE("libgomp: omp threads and omp parallel answer from DMPL and say what they cannot show", "[dmpl]") {
    if (!have_dmpl_examples()) {
        return;
    }
    auto r = ompdbg_on(dmpl_example("fig8-gcc-dwarf5-O0"),
                       {"break " + example_location("dmpl/fig8.c", "fig8-return"), "run", "omp threads",
                        "omp parallel", "omp bt"});
    REQUIRE_FALSE(r.timed_out);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    // The stopped thread runs the region's outlined routine, as thread N of the team of 4
    // (Fig. 8's omp_set_num_threads(4)), its number from libgomp's per-thread data.
    CHECK(std::regex_search(
        r.out, std::regex(R"(\* \d+\s+\d+\s+(encountering thread, )?OpenMP thread [0-3] of 4 \(level 1\)\s+omp parallel in main)")));
    CHECK(r.out.find("cannot be shown") != std::string::npos);
    CHECK(r.out.find("(outlined main._omp_fn.0)") != std::string::npos);
    CHECK(r.out.find("[omp parallel in main") != std::string::npos);  // omp bt without OMPD
}

TEST_CASE("libgomp: omp threads shows each thread's OpenMP number, team size and level as the thread printed them",
          "[dmpl]") {
    if (!have_dmpl_examples()) {
        return;
    }
    // Two inner teams of different sizes (2 and 3) at level 2; every thread printed its own
    // tid, number, team size and level before the stop.
    auto r = ompdbg_on(dmpl_example("team_numbers-gcc-dwarf5-O0"), {"break all_printed", "run", "omp threads"});
    REQUIRE_FALSE(r.timed_out);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    std::map<std::string, std::string> truth;   // tid -> "num size level"
    std::regex printed(R"(truth: tid=(\d+) num=(\d+) size=(\d+) level=(\d+))");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), printed); it != std::sregex_iterator(); ++it) {
        truth[(*it)[1]] = std::string((*it)[2]) + " " + std::string((*it)[3]) + " " + std::string((*it)[4]);
    }
    REQUIRE(truth.size() == 5);
    std::map<std::string, std::string> shown;
    std::regex row(R"((?:^|\n)[* ] +\d+ +(\d+) +(?:encountering thread, )?OpenMP thread (\d+) of (\d+) \(level (\d+)\))");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row); it != std::sregex_iterator(); ++it) {
        shown[(*it)[1]] = std::string((*it)[2]) + " " + std::string((*it)[3]) + " " + std::string((*it)[4]);
    }
    CHECK(shown == truth);
    std::multiset<std::string> numbers;
    for (const auto& [tid, v] : shown) {
        numbers.insert(v.substr(0, v.find(' ')));
    }
    CHECK(numbers == std::multiset<std::string>{"0", "0", "1", "1", "2"});
    CHECK(r.out.find("thread states, tasks and ICVs cannot be shown") != std::string::npos);
}

TEST_CASE("bad DMPL input: each a clear line, never a crash", "[dmpl][bad-input]") {
    if (!have_dmpl_examples()) {
        return;
    }
    const std::string fig8 = dmpl_example("fig8_notls-clang-dwarf5-O0");
    const std::string brk = "break " + example_location("dmpl/fig8.c", "fig8-return");
    SECTION("a library missing an entry point") {
        auto r = ompdbg_on(fig8, {brk, "run", "omp info", "print i"}, {"--dmpl-library", fake_dmpl("missing")});
        REQUIRE(r.term_signal == 0);
        CHECK(r.err.find("not a DMPL library: it does not define DMPL_get_tls_address") != std::string::npos);
        CHECK(std::regex_search(r.out, std::regex(R"(\$1 = \d)")));  // the session goes on
    }
    SECTION("a library of an incompatible version") {
        auto r = ompdbg_on(fig8, {"set dmpl-library " + fake_dmpl("version"), brk, "run", "omp info"});
        REQUIRE(r.term_signal == 0);
        CHECK(r.err.find("DMPL interface version 99 is not supported (ompdbg implements version 1)") !=
              std::string::npos);
    }
    SECTION("a library returning a code it does not name") {
        auto r = ompdbg_on(fig8, {brk, "run", "print a"}, {"--dmpl-library", fake_dmpl("unknown")});
        REQUIRE(r.term_signal == 0);
        CHECK(r.err.find("DMPL_get_tls_address: unknown DMPL code 4242 (the DMPL library does not name it)") !=
              std::string::npos);
    }
    SECTION("a library pointing to unreadable memory") {
        auto r = ompdbg_on(fig8, {brk, "run", "print a", "omp threadprivate a"}, {"--dmpl-library", fake_dmpl("badptr")});
        REQUIRE(r.term_signal == 0);
        CHECK(r.err.find("Cannot access memory at address 0x10") != std::string::npos);
        CHECK(r.out.find("<error: Cannot access memory at address 0x10>") != std::string::npos);
    }
    SECTION("omp threadprivate of a variable that is not threadprivate, or not there") {
        auto r = ompdbg_on(fig8, {brk, "run", "omp threadprivate tcount", "omp threadprivate no_such_var",
                                  "omp threadprivate"});
        REQUIRE(r.term_signal == 0);
        CHECK(r.err.find("`tcount' is not threadprivate") != std::string::npos);
        CHECK(r.err.find("No symbol \"no_such_var\" in current context.") != std::string::npos);
        CHECK(r.err.find("Argument required (name of a threadprivate variable).") != std::string::npos);
    }
}

TEST_CASE("a clang outlined routine's private copy and its same-named parameter are both seen, as gdb does",
          "[dmpl]") {
    if (!have_dmpl_examples()) {
        return;
    }
    // clang passes the reduction variable `red` as a parameter and keeps the thread's
    // private copy in a local of the same name. gdb prints the local for `print red` (a
    // function block prefers its locals) and for the argument as well (print_frame_args
    // looks the name up again). The copy starts at 0 and adds fp + pr + tp = 3 + pr + 5.
    auto r = ompdbg_on(dmpl_example("clauses-clang-dwarf5-O0"),
                       {"break " + example_location("dmpl/clauses.c", "clauses-region"), "run", "print red",
                        "print pr", "info args"});
    REQUIRE_FALSE(r.timed_out);
    INFO(r.all());
    CHECK(r.exit_code == 0);
    std::smatch red, pr;
    REQUIRE(std::regex_search(r.out, red, std::regex(R"(\$1 = (-?\d+))")));
    REQUIRE(std::regex_search(r.out, pr, std::regex(R"(\$2 = (-?\d+))")));
    CHECK(std::stol(red[1]) == std::stol(pr[1]) + 8);
    CHECK(r.out.find("\nred = " + red[1].str() + "\n") != std::string::npos);
}
