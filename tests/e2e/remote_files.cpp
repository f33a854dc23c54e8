// The files of a process on another host that are not here, or another build at the same
// path here (issue 18): read from the host through gdbserver's vFile: packets, as gdb
// does ("Reading PATH from remote target..."), once: a later session finds them in the
// build-id cache ($XDG_CACHE_HOME/ompdbg/build-id/XX/REST). The host's own file lives on a
// tmpfs mounted in the simulated host's mount namespace only, over a directory that is
// empty (or holds another program) here. Each test removes its hosts, processes and
// directories, also when it fails.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "cluster.hpp"
#include "remote_counter.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

namespace fs = std::filesystem;

constexpr auto step_timeout = 60s;

/// A directory of this machine for one test, removed with everything in it at the end.
struct scratch_dir {
    fs::path path;
    explicit scratch_dir(const std::string& what) {
        std::string templ = (fs::temp_directory_path() / ("ompdbg-" + what + "-XXXXXX")).string();
        REQUIRE(::mkdtemp(templ.data()) != nullptr);
        path = templ;
    }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
};

/// Mounts a tmpfs over `dir` in `host`'s mount namespace and copies `program` there as
/// `name`: the host's file, which this machine does not see. The mount ends with the host.
void put_on_host_only(const simulated_cluster& cluster, const std::string& host, const fs::path& dir,
                      const std::string& program, const std::string& name) {
    auto r = run({cluster.rsh(), host,
                  "mount -t tmpfs tmpfs " + dir.string() + " && cp " + program + " " + (dir / name).string()},
                 cluster.options(run_options().timeout_after(step_timeout)));
    INFO(r.all());
    REQUIRE(r.ok());
}

/// The GNU build-id of `file` as readelf prints it (lowercase hex).
std::string build_id_of(const std::string& file) {
    auto r = run({"readelf", "-n", file}, run_options().timeout_after(step_timeout));
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(Build ID: ([0-9a-f]+))")));
    return m[1];
}

/// remote_counter, and whether it printed "counter N" (waiting until it printed a few more
/// than before).
bool printed(remote_counter& prog, long n) {
    REQUIRE(prog.proc.wait_for_line(std::regex("^counter " + std::to_string(std::max(n, prog.last_value()) + 2) + "$"),
                                    step_timeout));
    auto& lines = prog.proc.consumed_lines();
    return std::find(lines.begin(), lines.end(), "counter " + std::to_string(n)) != lines.end();
}

/// One ompdbg session on the counter of `host`: attach, bt, print current, detach.
run_result debug_counter(const simulated_cluster& cluster, const std::string& host, const std::string& pid,
                         const fs::path& cache) {
    return ompdbg_batch(ex_args({"target extended-remote " + cluster.agent(host), "attach " + pid, "bt",
                                 "print current", "info inferiors", "detach"}),
                        cluster.options(run_options().timeout_after(step_timeout).set_env("XDG_CACHE_HOME",
                                                                                          cache.string())));
}

/// The stack and the value of the program's own variable: what only its symbols and DWARF
/// give (main waits in the pause_a_little call, the line after the "loop" mark). Returns the
/// value of `current`.
long check_symbolized(const run_result& r, const std::string& pid) {
    CHECK(r.ok());
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +0x[0-9a-f]+ in pause_a_little \(\) at .*counter\.c:\d+)")));
    CHECK(std::regex_search(r.out, std::regex(R"(#\d+ +0x[0-9a-f]+ in main \(argc=1, argv=0x[0-9a-f]+\) at .*counter\.c:)" +
                                              std::to_string(example_line("counter.c", "loop") + 1))));
    CHECK(has_line(r.out, "[Inferior 1 (process " + pid + ") detached]"));
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex(R"(\$1 = (\d+)\n)")));
    return std::stol(m[1]);
}

}  // namespace

TEST_CASE("a program that exists only on the other host is read through the agent once and from the build-id "
          "cache in the next session",
          "[cli][remote]") {
    scratch_dir cache("build-id-cache");
    scratch_dir host_only("host-only");   // empty here; the host's tmpfs over it holds the program
    simulated_cluster cluster({"node1"});
    put_on_host_only(cluster, "node1", host_only.path, example_path("counter"), "counter");
    const std::string program = (host_only.path / "counter").string();
    REQUIRE_FALSE(fs::exists(program));
    remote_counter prog(cluster, "node1", program);

    long before = prog.last_value();
    auto first = debug_counter(cluster, "node1", prog.pid, cache.path);
    INFO("first session stdout:\n" << first.out << "\nstderr:\n" << first.err);
    REQUIRE_FALSE(first.timed_out);
    // As gdb says it, once, before the transfer.
    CHECK(count_lines_starting(first.out, "Reading " + program + " from remote target...") == 1);
    // The libraries are the same files here (one machine): read here, not fetched.
    CHECK(first.out.find("Reading /lib") == std::string::npos);
    long value = check_symbolized(first, prog.pid);
    // The program's own output says which values `current` took.
    CHECK(value >= before);
    CHECK(printed(prog, value));
    // The host's path, not the copy's, names the program, as gdb names a file it read through
    // the agent ("target:PATH"); no complaint that it is not here.
    CHECK(std::regex_search(first.out, std::regex(R"(\* 1 +process )" + prog.pid + R"( +1 \(extended-remote .*\) +target:)" +
                                                  program + " *\n")));
    // (The stop in the C library says on stderr, as gdb does, that its source file is not
    // on this machine: "71\t../sysdeps/unix/sysv/linux/clock_nanosleep.c: No such file or
    // directory."; nothing else may say "No such file".)
    for (const auto& l : lines_of(first.err)) {
        if (l.find("No such file") != std::string::npos) {
            CHECK(std::regex_match(l, std::regex(R"(\d+\t\.\./sysdeps/\S+\.c: No such file or directory\.)")));
        }
    }

    // Cached under its build-id, the one readelf reads from the same program here.
    std::string id = build_id_of(example_path("counter"));
    fs::path cached = cache.path / "ompdbg" / "build-id" / id.substr(0, 2) / id.substr(2);
    REQUIRE(fs::exists(cached));
    auto written = fs::last_write_time(cached);

    before = prog.last_value();
    auto second = debug_counter(cluster, "node1", prog.pid, cache.path);
    INFO("second session stdout:\n" << second.out << "\nstderr:\n" << second.err);
    REQUIRE_FALSE(second.timed_out);
    CHECK(second.out.find("from remote target...") == std::string::npos);
    value = check_symbolized(second, prog.pid);
    CHECK(value >= before);
    CHECK(printed(prog, value));
    CHECK(fs::last_write_time(cached) == written);
    // Nothing half-written left beside it.
    int entries = 0;
    for ([[maybe_unused]] auto& e : fs::recursive_directory_iterator(cache.path / "ompdbg" / "build-id")) {
        ++entries;
    }
    CHECK(entries == 2);   // XX/ and XX/REST
}

TEST_CASE("a program read only through the agent is target:PATH in info inferiors, also after detach, until file "
          "discards it, as gdb shows it",
          "[cli][remote]") {
    scratch_dir cache("build-id-cache");
    scratch_dir host_only("host-only");
    simulated_cluster cluster({"node1"});
    put_on_host_only(cluster, "node1", host_only.path, example_path("counter"), "counter");
    const std::string program = (host_only.path / "counter").string();
    remote_counter prog(cluster, "node1", program);
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "attach " + prog.pid,
                                  "info inferiors", "detach", "info inferiors", "file", "info inferiors"};
    auto opts = cluster.options(run_options().timeout_after(step_timeout).set_env("XDG_CACHE_HOME", cache.path.string()));
    auto ours = ompdbg_batch(ex_args(cmds), opts);
    std::vector<std::string> gdb_args;
    for (auto& a : ex_args(cmds)) {
        gdb_args.push_back(a);
    }
    auto theirs = gdb_batch(gdb_args, opts);
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.ok());
    auto tables = [](const std::string& out) { return joined(grep(masked(out), R"(^(  Num |\* 1 ))")); };
    CHECK(tables(theirs.out).find("target:" + program) != std::string::npos);
    CHECK(tables(ours.out) == tables(theirs.out));
    CHECK(std::regex_search(ours.out, std::regex(R"(\* 1 +<null> +1 \(extended-remote .*\) +target:)" + program + " *\n")));
    prog.check_runs_on();

    // --json (and the DAP server, which sends its text as a console `output` event): the
    // transfer is an event naming the file and the host. A fresh cache: it is read again.
    scratch_dir cache2("build-id-cache");
    auto json = ompdbg_batch({"--json", "-ex", "target extended-remote " + cluster.agent("node1"), "-ex",
                              "attach " + prog.pid, "-ex", "detach"},
                             cluster.options(run_options().timeout_after(step_timeout).set_env("XDG_CACHE_HOME",
                                                                                               cache2.path.string())));
    INFO("ompdbg --json:\n" << json.out << json.err);
    int events = 0;
    for (const auto& l : lines_of(json.out)) {
        auto j = nlohmann::json::parse(l, nullptr, false);
        if (!j.is_discarded() && j.value("event", "") == "remote-file") {
            ++events;
            CHECK(j.value("path", "") == program);
            CHECK(j.value("host", "") == "node1");
            CHECK(j.value("text", "") == "Reading " + program + " from remote target...");
        }
    }
    CHECK(events == 1);
    prog.check_runs_on();
}

TEST_CASE("another program at the same path here is not read for the host's: the host's own file is fetched",
          "[cli][remote]") {
    scratch_dir cache("build-id-cache");
    scratch_dir dir("other-build");
    // Here: another program under the name; on the host: the counter.
    const std::string program = (dir.path / "counter").string();
    fs::copy_file(example_path("watched"), program);
    simulated_cluster cluster({"node1"});
    put_on_host_only(cluster, "node1", dir.path, example_path("counter"), "counter");
    remote_counter prog(cluster, "node1", program);

    long before = prog.last_value();
    auto r = debug_counter(cluster, "node1", prog.pid, cache.path);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(count_lines_starting(r.out, "Reading " + program + " from remote target...") == 1);
    long value = check_symbolized(r, prog.pid);
    CHECK(value >= before);
    CHECK(printed(prog, value));
    // The file here is untouched.
    CHECK(build_id_of(program) == build_id_of(example_path("watched")));
}

TEST_CASE("set remote exec-file: run over extended-remote starts the host's program at that path, as gdb does",
          "[cli][remote]") {
    scratch_dir cache("build-id-cache");
    scratch_dir host_only("host-only");   // empty here; the host's tmpfs over it holds the program
    simulated_cluster cluster({"node1"});
    put_on_host_only(cluster, "node1", host_only.path, example_path("watched"), "watched-there");
    const std::string program = (host_only.path / "watched-there").string();
    REQUIRE_FALSE(fs::exists(program));
    // The program here (its symbols) and, on the host, a copy at another path only it has.
    std::vector<std::string> cmds{"target extended-remote " + cluster.agent("node1"), "set remote exec-file " + program,
                                  "show remote exec-file", "break bump", "run", "bt", "delete", "continue"};
    auto args = ex_args(cmds);
    args.push_back(example_path("watched"));
    auto opts = cluster.options(run_options().timeout_after(step_timeout).set_env("XDG_CACHE_HOME", cache.path.string()));
    auto ours = ompdbg_batch(args, opts);
    std::vector<std::string> gdb_args{"-ex", "set sysroot /"};
    gdb_args.insert(gdb_args.end(), args.begin(), args.end());
    auto theirs = gdb_batch(gdb_args, opts);
    INFO("ompdbg:\n" << ours.out << ours.err << "\ngdb:\n" << theirs.out << theirs.err);
    REQUIRE_FALSE(ours.timed_out);
    CHECK(ours.ok());
    // gdb shows the path alone.
    CHECK(has_line(ours.out, program));
    CHECK(has_line(theirs.out, program));
    auto from_hit = [](const std::string& out) {
        auto at = out.find("Breakpoint 1, ");
        return at == std::string::npos ? std::string()
                                       : joined(grep(masked(out.substr(at)), "^(Breakpoint|#|\\[Inferior|[0-9]+\t)"));
    };
    CHECK_FALSE(from_hit(theirs.out).empty());
    CHECK(from_hit(ours.out) == from_hit(theirs.out));
    CHECK(has_line(ours.err, "counter 1000 neighbour 4999950000 sink 7 doubled 42"));
}

TEST_CASE("set remote exec-file without a program here: run starts the host's program and reads it through the "
          "agent",
          "[cli][remote]") {
    scratch_dir cache("build-id-cache");
    scratch_dir host_only("host-only");
    simulated_cluster cluster({"node1"});
    put_on_host_only(cluster, "node1", host_only.path, example_path("watched"), "watched-there");
    const std::string program = (host_only.path / "watched-there").string();
    auto r = ompdbg_batch(ex_args({"target extended-remote " + cluster.agent("node1"), "set remote exec-file " + program,
                                   "run", "info inferiors"}),
                          cluster.options(run_options().timeout_after(step_timeout).set_env("XDG_CACHE_HOME",
                                                                                            cache.path.string())));
    INFO(r.all());
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.ok());
    CHECK(r.err.find("No executable file specified") == std::string::npos);
    CHECK(has_line(r.err, "counter 1000 neighbour 4999950000 sink 7 doubled 42"));
    CHECK(std::regex_search(r.out, std::regex(R"(\[Inferior 1 \(process \d+\) exited normally\])")));
}
