#pragma once
// Shared by the `ompdbg triage` e2e tests (triage.cpp, triage_jobs.cpp): running triage,
// finding report lines, the examples, and whether a process is still traced.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"

namespace ompdbg::test::triage_support {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

inline std::string omp_example(const std::string& name) { return std::string(examples_dir) + "/openmp/" + name; }
inline std::string mpi_example(const std::string& name) { return std::string(examples_dir) + "/mpi/" + name; }
inline std::string mpirun() { return std::string(cache_dir) + "/openmpi-4.1.4/bin/mpirun"; }

/// `mpirun --oversubscribe -np N ARGS...` as the tests start a job (a loaded 2-core machine).
inline std::vector<std::string> mpirun_argv(int ranks, std::vector<std::string> args) {
    std::vector<std::string> argv{mpirun(), "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks)};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

inline bool have_omp_examples() {
    if (!fs::exists(omp_example("omp_hang_barrier"))) {
        WARN("OpenMP examples not built (no OMPD-enabled libomp in the bootstrap cache): skipped");
        return false;
    }
    return true;
}

/// Runs `ompdbg triage ARGS...` with a deadline.
inline run_result triage(std::vector<std::string> args, std::chrono::milliseconds timeout = 180s) {
    std::vector<std::string> argv{ompdbg_binary, "triage"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, run_options().timeout_after(timeout));
}

/// The first line containing every one of `parts`, or "".
inline std::string line_with(const std::string& text, const std::vector<std::string>& parts) {
    for (const auto& l : lines_of(text)) {
        bool all = true;
        for (const auto& p : parts) {
            all = all && l.find(p) != std::string::npos;
        }
        if (all) {
            return l;
        }
    }
    return "";
}

/// TracerPid of a live process (0: nobody traces it).
inline int tracer_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("TracerPid:", 0) == 0) {
            return std::stoi(line.substr(10));
        }
    }
    return -1;
}

}  // namespace ompdbg::test::triage_support
