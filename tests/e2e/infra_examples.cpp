// The example programs and the test-support helpers, checked against ground truth that
// does not come from ompdbg: what the programs print, readelf, and gdb on the same files.

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <sys/stat.h>

using namespace ompdbg::test;
namespace fs = std::filesystem;

namespace {

// Every compiled variant of an example: gcc/clang × DWARF 4/5 × the given -O levels.
std::vector<std::string> variants(const std::string& name, std::vector<int> opts = {0}) {
    std::vector<std::string> v;
    for (int opt : opts) {
        for (auto& p : example_variants(name, opt)) {
            v.push_back(p);
        }
    }
    return v;
}

std::string readelf(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"readelf", "-W"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv).all();
}

bool has_section(const std::string& path, const std::string& section) {
    std::string out = run({"readelf", "-W", "-S", path}).out;
    return out.find(" " + section + " ") != std::string::npos;
}

// gdb's answer on the same binary: the first "Breakpoint N, func (...)" line, or "".
std::string gdb_break_line(const std::string& program, const std::string& where,
                           std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* cmd : {"set breakpoint pending on", "set debuginfod enabled off"}) {
        argv.insert(argv.end(), {"-ex", cmd});
    }
    argv.insert(argv.end(), {"-ex", "break " + where, "-ex", "run", "-ex", "bt", program});
    auto r = run(argv, run_options().timeout_after(60s));
    std::smatch m;
    static const std::regex hit(R"(((Thread \d+ "[^"]*" hit )?Breakpoint [0-9.]+, .*))");
    return std::regex_search(r.out, m, hit) ? m.str(1) : "";
}

}  // namespace

TEST_CASE("every variant of each example runs and prints its expected result", "[infra]") {
    struct expectation {
        std::string name;
        std::vector<int> opts;
        std::vector<std::string> args;
        std::string last_line;
    };
    const std::vector<expectation> all{
        {"structs", {0, 2}, {}, "message = changed"},
        {"cxx_features", {0, 2}, {},
         "counter 8 area 16 12.00 largest 9 8.75 scaled 20.00 twice 54 instances 2"},
        {"optimized", {0, 2}, {}, "sum_squares(10, 2) = 770 square(11) = 121"},
        {"entry_values", {0, 2}, {}, "keeps 5 changes 23"},
        {"threads", {0}, {"3"}, "threads done"},
        {"counter", {0}, {"3"}, "counter 3"},
        {"use_shlib", {0}, {}, "unloaded"},
        {"linked_shlib", {0}, {}, "square area 25 rectangle area 21 calls 2"},
    };
    for (const auto& e : all) {
        for (const auto& program : variants(e.name, e.opts)) {
            std::vector<std::string> argv{program};
            argv.insert(argv.end(), e.args.begin(), e.args.end());
            auto r = run(argv, run_options().timeout_after(30s));
            INFO(program << "\n" << r.all());
            CHECK(r.ok());
            CHECK(r.out.ends_with(e.last_line + "\n"));
        }
        CHECK(fs::exists(example_path(e.name)));
    }
}

TEST_CASE("threads example computes one sum per named thread", "[infra]") {
    auto r = run({example_path("threads"), "4"});
    REQUIRE(r.ok());
    for (long i = 0; i < 4; ++i) {
        long n = 1000 * (i + 1);
        CHECK_THAT(r.out, Catch::Contains("thread " + std::to_string(i) + " result " +
                                          std::to_string(n * (n + 1) / 2)));
    }
    // The names come from pthread_setname_np; gdb reads them from /proc.
    auto g = run({"gdb", "-nx", "-batch", "-ex", "break worker", "-ex", "run", "-ex",
                  "info threads", example_path("threads")},
                 run_options().timeout_after(60s));
    CHECK_THAT(g.out, Catch::Contains("worker-"));
    CHECK_THAT(g.out, Catch::Matches(R"((.|\n)*hit Breakpoint 1, worker \(w=(.|\n)*)"));
}

// gdb as ground truth that each build of each example is debuggable (one test case per
// program, so that each stays well inside the per-test timeout on a loaded machine).
static void check_gdb_breaks(const std::string& name, std::vector<int> opts, const std::string& spec,
                      const std::string& expect) {
    for (const auto& program : variants(name, opts)) {
        std::string line = gdb_break_line(program, spec);
        INFO(program << " break " << spec);
        CHECK_THAT(line, Catch::Contains(expect));
    }
}

TEST_CASE("gdb breaks in structs: a function and a file:line", "[infra]") {
    check_gdb_breaks("structs", {0, 2}, "factorial", "factorial (n=5)");
    check_gdb_breaks("structs", {0}, "structs.c:75", "area_of (r=");
}

TEST_CASE("gdb breaks in cxx_features: overloads, inlined function, template", "[infra]") {
    check_gdb_breaks("cxx_features", {0, 2}, "geometry::area", "geometry::area (");
    check_gdb_breaks("cxx_features", {0, 2}, "twice", "twice (v=");
    check_gdb_breaks("cxx_features", {0}, "largest<double>", "largest<double> (values=");
}

TEST_CASE("gdb breaks in optimized: an inlined function at -O0 and -O2", "[infra]") {
    check_gdb_breaks("optimized", {0, 2}, "square", "square (v=");
}

TEST_CASE("gdb breaks in threads, counter and the shared-library programs", "[infra]") {
    check_gdb_breaks("threads", {0}, "worker", "worker (w=");
    check_gdb_breaks("counter", {0}, "print_counter", "print_counter (n=0)");
    check_gdb_breaks("use_shlib", {0}, "shape_area", "shape_area (s=");
    check_gdb_breaks("linked_shlib", {0}, "shape_area", "shape_area (s=");
}

TEST_CASE("example_line finds the LINE-MARK lines, which gdb places where expected", "[infra]") {
    CHECK(example_location("structs.c", "loop_body") == "structs.c:125");
    CHECK(example_line("shlib/shapes.c", "shape_area_body") == 8);
    // "loop" in threads.c is line 25; "loop_body" elsewhere must not match it.
    CHECK(example_line("threads.c", "loop") == 25);
    CHECK_THROWS_WITH(example_line("structs.c", "no_such_mark"), Catch::Contains("no LINE-MARK"));
    // gdb agrees that the marks sit on lines with code: it stops there.
    auto r = gdb_batch({"-ex", "break " + example_location("structs.c", "area_of_body"), "-ex",
                        "run", example_path("structs")});
    CHECK_THAT(r.out, Catch::Contains("area_of (r=") &&
                          Catch::Contains(std::to_string(example_line("structs.c", "area_of_body")) +
                                          "\t"));
}

TEST_CASE("bad-input copies of structs are what their names say", "[infra]") {
    const std::string dir = examples_dir;
    const std::string original = example_path("structs", "gcc", 5, 0);
    REQUIRE(has_section(original, ".debug_info"));

    SECTION("stripped: runs, no .debug_info, no .symtab") {
        const auto stripped = dir + "/structs-stripped";
        CHECK_FALSE(has_section(stripped, ".debug_info"));
        CHECK_FALSE(has_section(stripped, ".symtab"));
        CHECK(run({stripped}).out == run({original}).out);
    }
    SECTION(".gnu_debuglink: the link names the .debug file beside it, which gdb uses") {
        const auto linked = dir + "/structs-debuglink";
        CHECK_FALSE(has_section(linked, ".debug_info"));
        CHECK_THAT(readelf({"-p", ".gnu_debuglink", linked}),
                   Catch::Contains("structs-debuglink.debug"));
        CHECK(has_section(dir + "/structs-debuglink.debug", ".debug_info"));
        CHECK_THAT(gdb_break_line(linked, "factorial"), Catch::Contains("factorial (n=5)"));
    }
    SECTION("build-id: debug-root/.build-id/xx/yyyy.debug, found by gdb with that root") {
        const auto stripped = dir + "/structs-buildid";
        CHECK_FALSE(has_section(stripped, ".debug_info"));
        CHECK_FALSE(has_section(stripped, ".gnu_debuglink"));
        std::smatch m;
        std::string notes = readelf({"-n", stripped});
        REQUIRE(std::regex_search(notes, m, std::regex("Build ID: ([0-9a-f]+)")));
        std::string id = m.str(1);
        auto debug = dir + "/debug-root/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) +
                     ".debug";
        CHECK(has_section(debug, ".debug_info"));
        CHECK_THAT(gdb_break_line(stripped, "factorial",
                                  {"-iex", "set debug-file-directory " + dir + "/debug-root"}),
                   Catch::Contains("factorial (n=5)"));
    }
    SECTION("truncated and corrupted copies") {
        CHECK(fs::file_size(dir + "/structs-truncated-1000") == 1000);
        CHECK(fs::file_size(dir + "/structs-truncated-half") == fs::file_size(original) / 2);
        auto shdr = run({"readelf", "-S", dir + "/structs-corrupt-shdr"});
        CHECK_THAT(shdr.all(), Catch::Contains("Error") || Catch::Contains("Warning") ||
                                   Catch::Contains("warning"));
        // Same size and sections, unreadable DWARF: gdb says so.
        CHECK(has_section(dir + "/structs-corrupt-dwarf", ".debug_info"));
        auto g = run({"gdb", "-nx", "-batch", "-ex", "info line factorial",
                      dir + "/structs-corrupt-dwarf"});
        CHECK_THAT(g.all(), Catch::Contains("Dwarf Error"));
    }
    SECTION("not-an-elf: a text file that exec refuses") {
        auto r = run({dir + "/not-an-elf"});
        CHECK(r.exit_code == 127);
        CHECK_THAT(r.err, Catch::Contains("Exec format error"));
    }
}

TEST_CASE("run captures stdout, stderr, stdin and the exit status", "[infra]") {
    auto r = run({"/bin/sh", "-c", "read a; echo \"got $a\"; echo oops >&2; exit 3"},
                 run_options().input("hello\n"));
    CHECK(r.out == "got hello\n");
    CHECK(r.err == "oops\n");
    CHECK(r.exit_code == 3);
    CHECK_FALSE(r.timed_out);

    auto env = run({"/bin/sh", "-c", "echo $OMPDBG_TEST_VALUE"},
                   run_options().set_env("OMPDBG_TEST_VALUE", "42"));
    CHECK(env.out == "42\n");

    auto missing = run({"/nonexistent/program"});
    CHECK(missing.exit_code == 127);
    CHECK_THAT(missing.err, Catch::Contains("No such file or directory"));
}

TEST_CASE("run kills a program that outlives its timeout, and its children", "[infra]") {
    // counter would print for hours; the group (counter and the shell) is killed.
    auto start = std::chrono::steady_clock::now();
    auto r = run({"/bin/sh", "-c", example_path("counter") + " & wait"},
                 run_options().timeout_after(300ms));
    CHECK(r.timed_out);
    CHECK(r.term_signal == SIGKILL);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    CHECK_THAT(r.out, Catch::StartsWith("counter 0\n"));
}

TEST_CASE("background_process reads counter lines and kills the program", "[infra]") {
    pid_t pid = 0;
    {
        background_process counter({example_path("counter")});
        pid = counter.pid();
        REQUIRE(pid > 0);
        // /proc is the ground truth for which program runs under that pid.
        CHECK(fs::read_symlink("/proc/" + std::to_string(pid) + "/exe") ==
              fs::path(example_path("counter")));
        auto first = counter.wait_for_line(std::regex(R"(^counter 3$)"), 10s);
        REQUIRE(first);
        for (int expected = 4; expected <= 8; ++expected) {
            auto line = counter.next_line(10s);
            REQUIRE(line);
            CHECK(*line == "counter " + std::to_string(expected));
        }
        CHECK(counter.consumed_lines().front() == "counter 0");
        CHECK(counter.running());
    }
    // The destructor killed and reaped it.
    struct stat st {};
    CHECK(::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0);
}

TEST_CASE("background_process talks to a program through its stdin", "[infra]") {
    background_process cat({"cat"});
    cat.write_stdin("first\nsecond\n");
    CHECK(cat.next_line(10s) == std::optional<std::string>("first"));
    CHECK(cat.wait_for_line(std::regex("sec"), 10s) == std::optional<std::string>("second"));
    cat.write_stdin("(prompt) ");
    CHECK(cat.wait_for_output(std::regex(R"(\(prompt\) $)"), 10s));
    cat.close_stdin();
    auto r = cat.wait_exit(10s);
    REQUIRE(r);
    CHECK(r->ok());
    CHECK_FALSE(cat.running());
    CHECK_FALSE(cat.next_line(100ms));
}

TEST_CASE("background_process reports a program that ends by a signal", "[infra]") {
    background_process counter({example_path("counter")});
    REQUIRE(counter.wait_for_line(std::regex("counter 1"), 10s));
    counter.send_signal(SIGTERM);
    auto r = counter.wait_exit(10s);
    REQUIRE(r);
    CHECK(r->term_signal == SIGTERM);
    CHECK_THROWS(background_process({"/nonexistent/program"}));
}
