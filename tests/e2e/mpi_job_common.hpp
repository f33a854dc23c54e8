#pragma once
// Shared by the MPI e2e tests (mpi_*.cpp): the bootstrap Open MPI's mpirun, the mpi_stages
// example run under it through ompdbg, and what its ranks print about themselves.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace ompdbg::test::mpi {

inline std::string mpirun() { return std::string(cache_dir) + "/openmpi-4.1.4/bin/mpirun"; }
inline std::string stages() { return std::string(examples_dir) + "/mpi/mpi_stages"; }

/// `run mpirun ... -np RANKS mpi_stages PROG_ARGS` (4-8 ranks on 2 cores: --oversubscribe).
inline std::vector<std::string> job_args(int ranks, const std::vector<std::string>& prog_args = {}) {
    std::vector<std::string> a{"run", mpirun(), "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks),
                               stages()};
    a.insert(a.end(), prog_args.begin(), prog_args.end());
    return a;
}

/// ompdbg in batch mode with `cmds` (-ex) on mpi_stages under mpirun; 180 s at most.
inline run_result ompdbg_job(const std::vector<std::string>& cmds, int ranks,
                             const std::vector<std::string>& prog_args = {}) {
    REQUIRE(std::filesystem::exists(mpirun()));   // scripts/bootstrap builds it
    REQUIRE(std::filesystem::exists(stages()));
    auto args = ex_args(cmds);
    auto job = job_args(ranks, prog_args);
    args.insert(args.end(), job.begin(), job.end());
    return ompdbg_batch(args, run_options().timeout_after(std::chrono::seconds(180)));
}

/// rank -> pid from the ranks' own "rank R of N pid P" lines.
inline std::map<int, int> pids_printed(const std::vector<std::string>& lines) {
    std::map<int, int> m;
    std::regex re(R"(^rank (\d+) of \d+ pid (\d+)$)");
    for (auto& l : lines) {
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[1])] = std::stoi(mm[2]);
        }
    }
    return m;
}

inline std::map<int, int> pids_printed(const std::string& out) { return pids_printed(lines_of(out)); }

}  // namespace ompdbg::test::mpi
