// The stack of an OpenMP worker as the user selects in it (issue 17): every frame number `bt`
// and `omp bt` print is the one `frame N` selects, with the runtime's frames folded
// (`set omp-bt-filter on`, the default) or not; the encountering thread's frames appear only
// in `omp bt continued`, after a separator naming that thread, with its own numbers. And a
// function inlined into a parallel region at -O2: its own variables as gdb shows them, no
// data-sharing labels, the region line at the pragma.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "transcript.hpp"

using namespace ompdbg::test;
namespace fs = std::filesystem;

namespace {

std::string dmpl_example(const std::string& name) {
    return std::string(examples_dir) + "/dmpl/" + name;
}

bool have_example(const std::string& name) {
    if (!fs::exists(dmpl_example(name))) {
        WARN("skipped: examples/dmpl not built (no libomp in the bootstrap cache; run scripts/bootstrap)");
        return false;
    }
    return true;
}

/// The text printed after the line "@@MARK" up to the next "@@" line.
std::string after_mark(const std::string& out, const std::string& mark) {
    auto at = out.find("@@" + mark + "\n");
    if (at == std::string::npos) {
        return {};
    }
    at += mark.size() + 3;
    auto end = out.find("@@", at);
    return out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/// "#N ..." lines of `text` by N (the first of each number).
std::map<int, std::string> numbered(const std::string& text) {
    std::map<int, std::string> out;
    static const std::regex level(R"(^#(\d+)\s)");
    for (const auto& l : lines_of(text)) {
        std::smatch m;
        if (std::regex_search(l, m, level)) {
            out.emplace(std::stoi(m[1]), l);
        }
    }
    return out;
}

/// The function a frame line or an `omp bt` construct row names.
std::string function_of(const std::string& row) {
    std::smatch m;
    static const std::regex construct(R"(\[([^\]]+)\]\s*$)");
    static const std::regex frame(R"(^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \()");
    if (std::regex_search(row, m, construct) || std::regex_search(row, m, frame)) {
        return m[1];
    }
    return {};
}

/// `echo @@frame-K` + `frame K` for K in [0, n) (levels past the stack fail harmlessly).
std::vector<std::string> select_each(const std::string& tag, int n) {
    std::vector<std::string> cmds;
    for (int k = 0; k < n; ++k) {
        cmds.push_back("echo @@" + tag + std::to_string(k) + "\\n");
        cmds.push_back("frame " + std::to_string(k));
    }
    cmds.push_back("echo @@end\\n");
    return cmds;
}

/// The first frame line `frame K` printed, by K.
std::map<int, std::string> selected_lines(const std::string& out, const std::string& tag, int n) {
    std::map<int, std::string> got;
    for (int k = 0; k < n; ++k) {
        auto rows = numbered(after_mark(out, tag + std::to_string(k)));
        if (!rows.empty()) {
            got[k] = rows.begin()->second;
        }
    }
    return got;
}

}  // namespace

TEST_CASE("bt on an OpenMP worker numbers its frames as frame N selects them, folded or not",
          "[dmpl][ompd][stack]") {
    auto program = GENERATE(std::string("fig8-gcc-dwarf5-O0"), std::string("fig8-clang-dwarf5-O0"));
    auto filter = GENERATE(std::string("on"), std::string("off"));
    if (!have_example(program)) {
        return;
    }
    CAPTURE(program, filter);
    constexpr int depth = 10;
    // Static schedule: iteration 9 runs in OpenMP thread 3, a worker.
    std::vector<std::string> cmds{"set omp-bt-filter " + filter, "show omp-bt-filter", "break foo if i == 9",
                                  "run", "echo @@bt\\n", "bt", "echo @@omp-bt\\n", "omp bt continued"};
    auto each = select_each("frame-", depth);
    cmds.insert(cmds.end(), each.begin(), each.end());
    // After `up` and `down`, the frame line printed is again bt's.
    cmds.insert(cmds.end(), {"frame 0", "echo @@up\\n", "up", "echo @@down\\n", "down", "echo @@end\\n",
                             "thread 1"});
    auto in_thread1 = select_each("t1-frame-", 2 * depth);
    cmds.insert(cmds.end(), in_thread1.begin(), in_thread1.end());
    auto r = ompdbg_cmds(dmpl_example(program), cmds);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.out.find("Whether bt folds the OpenMP runtime's frames of a parallel region into one line is " +
                     filter + ".") != std::string::npos);

    const std::string bt = after_mark(r.out, "bt");
    auto printed = numbered(bt);
    auto selected = selected_lines(r.out, "frame-", depth);
    REQUIRE(printed.size() >= 2);
    for (const auto& [n, line] : printed) {
        CAPTURE(n);
        REQUIRE(selected.count(n) == 1);
        CHECK(selected[n] == line);
    }
    CHECK(numbered(after_mark(r.out, "up")).begin()->second == printed.at(1));
    CHECK(numbered(after_mark(r.out, "down")).begin()->second == printed.at(0));
    // A worker's bt never goes on into the encountering thread's main.
    CHECK(bt.find(" main (") == std::string::npos);
    if (filter == "on") {
        CHECK(bt.find("[omp parallel in main at " + example_location("dmpl/fig8.c", "fig8-pragma")) !=
              std::string::npos);
        CHECK(bt.find("__kmp") == std::string::npos);
        CHECK(bt.find("start_thread") == std::string::npos);
    } else {
        CHECK(bt.find("[omp parallel") == std::string::npos);
        CHECK(printed.size() == selected.size());   // every frame, none folded
    }

    // omp bt continued: the worker's rows select as numbered; after the separator naming the
    // encountering thread (thread 1), its rows carry thread 1's own numbers.
    const std::string omp_bt = after_mark(r.out, "omp-bt");
    auto sep = omp_bt.find("---- continued in thread 1 (LWP ");
    if (sep == std::string::npos && program.find("clang") != std::string::npos) {
        // Through OMPD the continuation needs the encountering thread still inside the
        // outlined routine; here it may already wait in the region's closing barrier.
        for (const auto& [n, row] : numbered(omp_bt)) {
            CAPTURE(n, row);
            REQUIRE(selected.count(n) == 1);
            CHECK(function_of(selected[n]) == function_of(row));
        }
        return;
    }
    REQUIRE(sep != std::string::npos);
    CHECK(omp_bt.find("which encountered the construct; frame numbers are thread 1's ----", sep) !=
          std::string::npos);
    auto worker_rows = numbered(omp_bt.substr(0, sep));
    auto encountering_rows = numbered(omp_bt.substr(sep));
    REQUIRE_FALSE(worker_rows.empty());
    REQUIRE_FALSE(encountering_rows.empty());
    for (const auto& [n, row] : worker_rows) {
        CAPTURE(n, row);
        REQUIRE(selected.count(n) == 1);
        CHECK(function_of(selected[n]) == function_of(row));
    }
    auto t1 = selected_lines(r.out, "t1-frame-", 2 * depth);
    for (const auto& [n, row] : encountering_rows) {
        CAPTURE(n, row);
        REQUIRE(t1.count(n) == 1);
        CHECK(function_of(t1[n]) == function_of(row));
    }
    CHECK(function_of(encountering_rows.rbegin()->second) == "main");
}

TEST_CASE("a function inlined into a parallel region shows its own variables as gdb does, without scoping",
          "[dmpl][locals][gdb]") {
    auto program = GENERATE(std::string("inlined_region-gcc-dwarf5-O2"), std::string("inlined_region-clang-dwarf5-O2"));
    if (!have_example(program)) {
        return;
    }
    CAPTURE(program);
    const std::vector<std::string> cmds{"break " + example_location("dmpl/inlined_region.c", "inlined-record"),
                                        "run", "echo @@locals\\n", "info locals", "echo @@args\\n", "info args",
                                        "echo @@bt\\n", "bt", "echo @@end\\n"};
    auto ours = ompdbg_cmds(dmpl_example(program), cmds);
    auto gdb = gdb_cmds(dmpl_example(program), cmds);
    INFO(ours.all() << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // Pointers into the stack differ between two runs (gdb's environment is not ours):
    // compared as "an address" only.
    const auto unaddressed = [](const std::vector<std::string>& lines) {
        static const std::regex address(R"(0x[0-9a-f]+)");
        std::vector<std::string> out;
        for (const auto& l : lines) {
            out.push_back(std::regex_replace(l, address, "0x..."));
        }
        return out;
    };
    for (const std::string section : {"locals", "args"}) {
        CAPTURE(section);
        // gcc's inlined copy has `sum` in two blocks (a shadowed copy): gdb lists both,
        // and so does ompdbg.
        auto expected = unaddressed(lines_of(after_mark(gdb.out, section)));
        REQUIRE_FALSE(expected.empty());
        CHECK(joined(unaddressed(lines_of(after_mark(ours.out, section)))) == joined(expected));
    }
    // The region line names the pragma's line, not the inlined function's.
    const std::string bt = after_mark(ours.out, "bt");
    CHECK(bt.find("#0  macro_xs (") != std::string::npos);
    CHECK(bt.find("[omp parallel in main at " + example_location("dmpl/inlined_region.c", "inlined-pragma")) !=
          std::string::npos);
    CHECK_FALSE(std::regex_search(ours.out, std::regex(R"(\((firstprivate|shared|private|reduction)\))")));
}

TEST_CASE("bt in a nested region folds each region on its own and keeps the outer region's body",
          "[dmpl][ompd][stack]") {
    // omp_nested: libomp through OMPD (clang), and libgomp (gcc, which nests the inner
    // region's routine main._omp_fn.1 inside the outer one's lexical block in DWARF).
    auto program = GENERATE(std::string("omp_nested"), std::string("omp_nested_libgomp"));
    const std::string path = std::string(examples_dir) + "/openmp/" + program;
    if (!fs::exists(path)) {
        WARN("skipped: examples/openmp not built (no libomp in the bootstrap cache; run scripts/bootstrap)");
        return;
    }
    CAPTURE(program);
    constexpr int depth = 16;
    // Inner thread 0 of outer thread 0 reaches the checkpoint: it encountered both regions.
    std::vector<std::string> cmds{"break " + example_location("openmp/omp_nested.c", "nested-checkpoint"), "run",
                                  "echo @@bt\\n", "bt", "echo @@locals\\n", "info locals", "echo @@end\\n"};
    auto each = select_each("frame-", depth);
    cmds.insert(cmds.end(), each.begin(), each.end());
    auto r = ompdbg_cmds(path, cmds);
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    const std::string bt = after_mark(r.out, "bt");
    const std::string inner_at = example_location("openmp/omp_nested.c", "nested-inner");
    const std::string outer_at = example_location("openmp/omp_nested.c", "nested-outer");
    const bool ompd = program == "omp_nested";

    // Both regions, innermost first, each with this thread's place in its own team where
    // the runtime tells it (OMPD); libgomp's enclosing team is not readable: no numbers there.
    const std::string inner_label = "[omp parallel in main at " + inner_at + ", thread 0 of 3]";
    const std::string outer_label = "[omp parallel in main at " + outer_at + (ompd ? ", thread 0 of 2]" : "]");
    auto inner_pos = bt.find(inner_label), outer_pos = bt.find(outer_label);
    REQUIRE(inner_pos != std::string::npos);
    REQUIRE(outer_pos != std::string::npos);
    CHECK(inner_pos < outer_pos);
    // Between them, the outer region's body that encountered the inner construct (user
    // code, at the inner pragma's line), never folded into the runtime's frames.
    auto rows = numbered(bt);
    const std::string* body = nullptr;
    for (const auto& [n, line] : rows) {
        auto at = bt.find(line);
        if (at > inner_pos && at < outer_pos) {
            body = &line;
        }
    }
    REQUIRE(body != nullptr);
    CHECK_THAT(*body, Catch::Contains("omp_nested.c:" + inner_at.substr(inner_at.find(':') + 1)));
    CHECK_THAT(*body, Catch::Contains(ompd ? "omp_outlined" : "main._omp_fn.0"));
    CHECK(function_of(rows.rbegin()->second) == "main");
    CHECK(bt.find("__kmp") == std::string::npos);
    CHECK(bt.find("GOMP_parallel") == std::string::npos);
    // Every number bt printed is the frame `frame N` selects.
    auto selected = selected_lines(r.out, "frame-", depth);
    for (const auto& [n, line] : rows) {
        CAPTURE(n);
        REQUIRE(selected.count(n) == 1);
        CHECK(selected[n] == line);
    }
    // The innermost frame is the region's body with its source line and its variables.
    CHECK_THAT(rows.begin()->second, Catch::Contains(" at ") && Catch::Contains("omp_nested.c:"));
    const std::string locals = after_mark(r.out, "locals");
    CHECK_THAT(locals, Catch::Contains("inner = 0"));
    CHECK_THAT(locals, Catch::Contains("outer = 0"));
}

TEST_CASE("info locals in an optimised outlined routine lists what gdb lists, shadowed copies included, "
          "without data-sharing labels it cannot back",
          "[dmpl][locals][gdb]") {
    auto program = GENERATE(std::string("clauses-gcc-dwarf5-O2"), std::string("clauses-clang-dwarf5-O2"));
    if (!have_example(program)) {
        return;
    }
    CAPTURE(program);
    const std::vector<std::string> cmds{"break " + example_location("dmpl/clauses.c", "clauses-region"), "run",
                                        "echo @@locals\\n", "info locals", "echo @@print\\n", "print sh",
                                        "print fp", "echo @@end\\n"};
    auto ours = ompdbg_cmds(dmpl_example(program), cmds);
    auto gdb = gdb_cmds(dmpl_example(program), cmds);
    INFO(ours.all() << gdb.all());
    REQUIRE_FALSE(ours.timed_out);
    // Which thread stops first differs between the two runs: its private values (pr, red)
    // may too. The names may not, each as often as gdb lists it; their order inside a
    // lexical block is the order of gdb's hash table of the block's symbols, not the
    // DWARF's, so the names are compared sorted.
    const auto names = [](const std::string& text) {
        std::vector<std::string> out;
        for (const auto& l : lines_of(text)) {
            auto eq = l.find(" = ");
            out.push_back(eq == std::string::npos ? l : l.substr(0, eq));
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    auto expected = names(after_mark(gdb.out, "locals"));
    REQUIRE(expected.size() >= 5);
    CHECK(joined(names(after_mark(ours.out, "locals"))) == joined(expected));
    CHECK(after_mark(ours.out, "print") == after_mark(gdb.out, "print"));
    if (program.find("gcc") != std::string::npos) {
        // gcc -O2 keeps the copies and .omp_data_i in registers (location lists): nothing
        // tells shared from private there, and no label is printed rather than a wrong one.
        CHECK_FALSE(std::regex_search(after_mark(ours.out, "locals"),
                                      std::regex(R"(\((firstprivate|shared|private|reduction|lastprivate)\))")));
    }
}
