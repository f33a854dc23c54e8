// `ompdbg doctor` on the machine, on programs and on processes, each lacking one piece in
// turn: the stripped Debian libomp, GNU libgomp, no OMP_DEBUG, no libompd next to the
// runtime, a stripped Open MPI, ptrace forbidden; and the complete set-up, where a live
// OMPD query must really be answered.
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <regex>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace fs = std::filesystem;
using namespace ompdbg::test;
using namespace std::chrono_literals;

namespace {

std::string omp_runtime_dir() { return std::string(cache_dir) + "/llvm-openmp-19.1.7/lib"; }

std::string omp_example(const std::string& name) { return std::string(examples_dir) + "/openmp/" + name; }

bool have_omp_examples() {
    if (!fs::exists(omp_example("omp_nested"))) {
        WARN("OpenMP examples not built (no OMPD-enabled libomp in the bootstrap cache): skipped");
        return false;
    }
    return true;
}

run_result doctor(std::vector<std::string> args, const run_options& opts = run_options().timeout_after(120s)) {
    std::vector<std::string> argv{ompdbg_binary, "doctor"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, opts);
}

/// The report line of check `name` ("  ok       libompd         ..."), or "" when absent.
std::string check_line(const std::string& out, const std::string& name) {
    std::regex re("^  (ok|info|warn|missing) +" + name + " +.*$", std::regex::multiline);
    std::smatch m;
    return std::regex_search(out, m, re) ? m.str(0) : std::string();
}

std::string status_of(const std::string& out, const std::string& name) {
    std::string line = check_line(out, name);
    if (line.empty()) {
        return "";
    }
    std::istringstream in(line);
    std::string word;
    in >> word;
    return word;
}

}  // namespace

TEST_CASE("doctor without a target checks the machine's OpenMP and MPI pieces", "[doctor][e2e]") {
    auto r = doctor({});
    INFO(r.all());
    CHECK_THAT(r.out, Catch::StartsWith("ompdbg doctor: this machine"));
    CHECK(status_of(r.out, "ptrace") == "ok");   // the suite runs as root
    if (fs::exists(omp_runtime_dir() + "/libompd.so")) {
        CHECK(status_of(r.out, "openmp runtime") == "ok");
        CHECK(status_of(r.out, "libompd") == "ok");
        CHECK_THAT(check_line(r.out, "libompd"), Catch::Contains("OMPD API version 2"));
    }
    if (fs::exists(std::string(cache_dir) + "/openmpi-4.1.4/bin/mpirun")) {
        CHECK(status_of(r.out, "open mpi") == "ok");
        CHECK(status_of(r.out, "msgq dll") == "ok");
        CHECK(status_of(r.out, "msgq types") == "ok");
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("Everything needed was found."));
    }
}

TEST_CASE("doctor PROG on an OMPD program finds the runtime, loads libompd and sees debug info", "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = doctor({omp_example("omp_nested")});
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(status_of(r.out, "debug info") == "ok");
    CHECK(status_of(r.out, "openmp runtime") == "ok");
    CHECK_THAT(check_line(r.out, "openmp runtime"), Catch::Contains(fs::canonical(omp_runtime_dir()).string()));
    CHECK(status_of(r.out, "OMP_DEBUG") == "ok");
    CHECK(status_of(r.out, "libompd") == "ok");
    CHECK_THAT(check_line(r.out, "libompd"), Catch::Contains("libompd.so loads"));
}

TEST_CASE("doctor PROG runs the program to its OMPD initialisation, asks libompd, and kills it", "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = doctor({omp_example("omp_nested")});
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(status_of(r.out, "ompd query") == "ok");
    // The runtime's own "OMP_OMPD active" went to the program's stderr, not the report's.
    CHECK(r.err.find("OMP_OMPD") == std::string::npos);
    std::string line = check_line(r.out, "ompd query");
    std::smatch m;
    // omp_nested's first region comes at once: the answer is taken there, where the runtime
    // is initialised; the initial thread is an OpenMP thread.
    REQUIRE(std::regex_search(line, m, std::regex(R"(ran omp_nested \(process (\d+)\) with OMP_DEBUG=enabled; libompd )"
                                                  R"(answered at its first parallel region \(ompd_bp_parallel_begin\): )"
                                                  R"((\d+) OpenMP threads of (\d+) threads)")));
    CHECK(std::stoi(m.str(2)) >= 1);
    CHECK(std::stoi(m.str(2)) <= std::stoi(m.str(3)));
    // The processors the program may run on (it inherits this process's affinity mask).
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    CHECK_THAT(line, Catch::Contains("num-procs-var " + std::to_string(CPU_COUNT(&set))));
    // Killed and reaped: the process is gone.
    CHECK_FALSE(fs::exists("/proc/" + m.str(1)));
}

TEST_CASE("doctor PROG on Debian's stripped libomp names the file, what it lacks and the fix", "[doctor][e2e]") {
    std::string prog = omp_example("omp_nested_debian_libomp");
    if (!fs::exists(prog)) {
        WARN("no Debian libomp variant built: skipped");
        return;
    }
    auto r = doctor({prog});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(status_of(r.out, "openmp runtime") == "missing");
    CHECK_THAT(check_line(r.out, "openmp runtime"), Catch::Contains("/usr/lib/llvm-19/lib/libomp.so"));
    CHECK_THAT(check_line(r.out, "openmp runtime"), Catch::Contains("lacks the OMPD symbols"));
    CHECK_THAT(r.out, Catch::Contains("fix: use the OMPD-enabled runtime that scripts/bootstrap builds"));
    CHECK(check_line(r.out, "libompd").empty());   // nothing to load for a runtime without OMPD
}

TEST_CASE("doctor PROG on a libgomp program says there is no OMPD and points to DMPL", "[doctor][e2e]") {
    std::string prog = omp_example("omp_nested_libgomp");
    if (!fs::exists(prog)) {
        WARN("no libgomp variant built: skipped");
        return;
    }
    auto r = doctor({prog});
    INFO(r.all());
    CHECK(status_of(r.out, "openmp runtime") == "warn");
    CHECK_THAT(check_line(r.out, "openmp runtime"), Catch::Contains("GNU libgomp"));
    CHECK_THAT(r.out, Catch::Contains("DMPL"));
}

TEST_CASE("doctor PID of a process started without OMP_DEBUG says how to fix it and leaves it running",
          "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    background_process prog({omp_example("omp_barrier_stuck")});
    REQUIRE(prog.wait_for_line(std::regex("truth: stuck"), 60s));
    auto r = doctor({std::to_string(prog.pid())});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(status_of(r.out, "OMP_DEBUG") == "missing");
    CHECK_THAT(r.out, Catch::Contains("restart it with OMP_DEBUG=enabled"));
    CHECK(check_line(r.out, "ompd query").empty());
    CHECK(prog.running());
}

TEST_CASE("doctor PID of a complete set-up answers a real OMPD query and the process runs on", "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    background_process prog({omp_example("omp_barrier_stuck")}, run_options().set_env("OMP_DEBUG", "enabled"));
    auto stuck = prog.wait_for_line(std::regex("truth: stuck team_size=(\\d+)"), 60s);
    REQUIRE(stuck);
    std::smatch m;
    REQUIRE(std::regex_search(*stuck, m, std::regex("team_size=(\\d+)")));
    auto r = doctor({std::to_string(prog.pid())}, run_options().timeout_after(120s));
    INFO(r.all());
    CHECK(r.exit_code == 0);
    CHECK(status_of(r.out, "ptrace") == "ok");
    CHECK(status_of(r.out, "OMP_DEBUG") == "ok");
    CHECK(status_of(r.out, "ompd query") == "ok");
    // The program's own team size is the number of OpenMP threads libompd must report.
    CHECK_THAT(check_line(r.out, "ompd query"), Catch::Contains(": " + m.str(1) + " OpenMP threads"));
    // Detached: not stopped, not traced.
    CHECK(prog.running());
    std::ifstream status("/proc/" + std::to_string(prog.pid()) + "/status");
    std::string line, tracer, state;
    while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            tracer = line;
        }
        if (line.rfind("State:", 0) == 0) {
            state = line;
        }
    }
    CHECK_THAT(tracer, Catch::EndsWith("\t0"));
    CHECK_THAT(state, !Catch::Contains("stopped") && !Catch::Contains("tracing stop"));
}

TEST_CASE("doctor PID whose runtime has no libompd beside it says so and names the one to use", "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    // The same OMPD-enabled runtime, copied where no libompd.so lies next to it; the
    // program's RUNPATH yields to LD_LIBRARY_PATH.
    fs::path dir = fs::temp_directory_path() / ("ompdbg-doctor-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::copy_file(omp_runtime_dir() + "/libomp.so", dir / "libomp.so", fs::copy_options::overwrite_existing);
    {
        background_process prog({omp_example("omp_barrier_stuck")},
                                run_options().set_env("OMP_DEBUG", "enabled").set_env("LD_LIBRARY_PATH", dir.string()));
        REQUIRE(prog.wait_for_line(std::regex("truth: stuck"), 60s));
        auto r = doctor({std::to_string(prog.pid())});
        INFO(r.all());
        CHECK(r.exit_code == 1);
        CHECK(status_of(r.out, "openmp runtime") == "ok");
        CHECK_THAT(check_line(r.out, "openmp runtime"), Catch::Contains(dir.string()));
        CHECK(status_of(r.out, "libompd") == "missing");
        CHECK_THAT(check_line(r.out, "libompd"), Catch::Contains("no libompd.so next to the runtime in " + dir.string()));
        if (fs::exists("/usr/lib/llvm-19/lib/libompd.so")) {
            CHECK_THAT(r.out, Catch::Contains("--ompd-library /usr/lib/llvm-19/lib/libompd.so"));
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("doctor on Debian's stripped Open MPI names the missing types and how to get them", "[doctor][e2e]") {
    if (!fs::exists("/usr/bin/mpirun")) {
        WARN("Debian's Open MPI is not installed: skipped");
        return;
    }
    auto r = doctor({"/usr/bin/mpirun"});
    INFO(r.all());
    CHECK(status_of(r.out, "mpi starter") == "ok");
    CHECK_THAT(check_line(r.out, "mpi starter"), Catch::Contains("MPIR"));
    CHECK(status_of(r.out, "msgq types") == "missing");
    CHECK_THAT(check_line(r.out, "msgq types"), Catch::Contains("has no debug information"));
    CHECK_THAT(check_line(r.out, "msgq types"), Catch::Contains("ompi_communicator_t"));
    CHECK_THAT(r.out, Catch::Contains("scripts/bootstrap builds"));
    CHECK(r.exit_code == 1);

    std::string mpirun = std::string(cache_dir) + "/openmpi-4.1.4/bin/mpirun";
    if (fs::exists(mpirun)) {
        auto good = doctor({mpirun});
        INFO(good.all());
        CHECK(status_of(good.out, "mpi starter") == "ok");
        CHECK(status_of(good.out, "msgq dll") == "ok");
        CHECK(status_of(good.out, "msgq types") == "ok");
    }
}

TEST_CASE("doctor PID when ptrace is forbidden says why and what would allow it", "[doctor][e2e]") {
    if (::geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) {
        WARN("needs root and setpriv to run the doctor as another user: skipped");
        return;
    }
    // A process of root; the doctor runs as user nobody, without CAP_SYS_PTRACE.
    background_process prog({"/bin/sleep", "300"});
    auto r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                  ompdbg_binary, "doctor", std::to_string(prog.pid())},
                 run_options().timeout_after(60s));
    INFO(r.all());
    if (r.exit_code == 127 || r.err.find("Permission denied") != std::string::npos) {
        WARN("user nobody cannot run " << ompdbg_binary << " here: skipped");
        return;
    }
    CHECK(r.exit_code == 1);
    CHECK(status_of(r.out, "ptrace") == "missing");
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("belongs to user 0"));
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("without CAP_SYS_PTRACE"));
    CHECK_THAT(r.out, Catch::Contains("fix: run ompdbg as the process's owner or as root"));
}

TEST_CASE("doctor PID of a process another debugger holds names the tracer", "[doctor][e2e]") {
    background_process gdb({"gdb", "-q", "-nx", "-batch", "-ex", "run", "--args", "/bin/sh", "-c",
                            "echo child=$$; exec sleep 300"});
    auto line = gdb.wait_for_line(std::regex("child=(\\d+)"), 60s);
    REQUIRE(line);
    std::string pid = line->substr(line->find('=') + 1);
    auto r = doctor({pid});
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK(status_of(r.out, "ptrace") == "missing");
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("already traced by process " + std::to_string(gdb.pid())));
    CHECK_THAT(check_line(r.out, "ptrace"), Catch::Contains("(gdb)"));
}

TEST_CASE("doctor --json gives one object with every check", "[doctor][e2e][json]") {
    if (!have_omp_examples()) {
        return;
    }
    auto r = run({ompdbg_binary, "--json", "doctor", omp_example("omp_nested")}, run_options().timeout_after(120s));
    INFO(r.all());
    REQUIRE(r.exit_code == 0);
    std::istringstream in(r.out);
    std::string first;
    std::getline(in, first);
    auto whole = nlohmann::json::parse(first);
    // docs/json.md: a command's structured answer is its "result" object.
    REQUIRE(whole.contains("result"));
    const auto& j = whole["result"];
    CHECK(whole["ok"] == true);
    REQUIRE(j.contains("checks"));
    REQUIRE(j["checks"].is_array());
    bool saw_libompd = false;
    for (const auto& c : j["checks"]) {
        CHECK(c["check"].is_string());
        CHECK(c["status"].is_string());
        CHECK(c["found"].is_string());
        saw_libompd |= c["check"] == "libompd" && c["status"] == "ok";
    }
    CHECK(saw_libompd);
    CHECK(j["complete"] == true);
}

TEST_CASE("doctor on no such file or no such process is one clear line", "[doctor][e2e]") {
    auto r = doctor({"/nonexistent/prog"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::Contains("/nonexistent/prog: No such file or directory"));
    auto p = doctor({"999999"});
    CHECK(p.exit_code == 1);
    CHECK_THAT(p.out, Catch::Contains("no process 999999"));
}

namespace {
/// DMPL_version_string() of a plugin, asked directly through dlopen (ground truth).
std::string plugin_version(const std::string& file) {
    void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
        return "";
    }
    auto fn = reinterpret_cast<const char* (*)()>(::dlsym(h, "DMPL_version_string"));
    std::string v = fn != nullptr && fn() != nullptr ? fn() : "";
    ::dlclose(h);
    return v;
}
}  // namespace

TEST_CASE("doctor checks the DMPL plugin of the program's runtime: found, loads, its version", "[doctor][e2e]") {
    if (!have_omp_examples()) {
        return;
    }
    std::string omp_plugin = std::string(plugins_dir) + "/libdmpl-libomp.so";
    std::string gomp_plugin = std::string(plugins_dir) + "/libdmpl-libgomp.so";
    REQUIRE(fs::exists(omp_plugin));
    auto r = doctor({omp_example("omp_nested")});
    INFO(r.all());
    CHECK(status_of(r.out, "dmpl libomp") == "ok");
    std::string v = plugin_version(omp_plugin);
    REQUIRE_FALSE(v.empty());
    CHECK_THAT(check_line(r.out, "dmpl libomp"), Catch::Contains(omp_plugin + " loads: \"" + v + "\""));
    CHECK(check_line(r.out, "dmpl libgomp").empty());   // not this program's runtime
    std::string gomp = omp_example("omp_nested_libgomp");
    if (fs::exists(gomp)) {
        auto g = doctor({gomp});
        INFO(g.all());
        CHECK(status_of(g.out, "dmpl libgomp") == "ok");
        CHECK_THAT(check_line(g.out, "dmpl libgomp"), Catch::Contains("\"" + plugin_version(gomp_plugin) + "\""));
    }
    // The machine: both plugins.
    auto m = doctor({});
    CHECK(status_of(m.out, "dmpl libomp") == "ok");
    CHECK(status_of(m.out, "dmpl libgomp") == "ok");
}
