#pragma once
// Shared by the MPI2DD end-to-end tests (tests/e2e/mpi2dd_*.cpp): the reference starter
// and rank program, `ompdbg run` of a job, what the processes print about themselves (the
// ground truth) and the rows of `mpi ranks`.

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_common.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace ompdbg::test::mpi2dd {

using namespace ompdbg::test::cli;


inline std::string dir() { return std::string(examples_dir) + "/mpi2dd"; }
inline std::string starter() { return dir() + "/mpi2dd-run"; }
inline std::string app() { return dir() + "/mpi2dd_app"; }

/// `ompdbg --batch -ex C... run STARTER ARGS...` (the CLI's `run -- PROG` form).
inline run_result ompdbg_job(const std::vector<std::string>& cmds, const std::vector<std::string>& job,
                      run_options opts = {}) {
    REQUIRE(std::filesystem::exists(starter()));
    REQUIRE(std::filesystem::exists(app()));
    auto args = ex_args(cmds);
    args.push_back("run");
    args.insert(args.end(), job.begin(), job.end());
    return ompdbg_batch(args, opts.timeout_after(std::chrono::seconds(180)));
}

/// What one process printed about itself.
struct self_report {
    int rank = -1;
    std::string world;
    int pid = 0;
    int ppid = 0;
    std::string parent;   ///< "W:R" or "-:-1"
    int seq = -1;
};

inline std::vector<self_report> reports(const std::string& out) {
    std::vector<self_report> v;
    std::regex re(R"(^MPI2DD-LOG rank=(\d+) size=\d+ world=(\S+) pid=(\d+) ppid=(\d+) parent=(\S+) seq=(-?\d+)$)");
    for (auto& l : lines_of(out)) {
        std::smatch m;
        if (std::regex_match(l, m, re)) {
            v.push_back({std::stoi(m[1]), m[2], std::stoi(m[3]), std::stoi(m[4]), m[5], std::stoi(m[6])});
        }
    }
    return v;
}

/// A row of `mpi ranks` for an MPI2DD job.
struct row {
    int rank = -1;
    std::string world;
    int world_rank = -1;
    int pid = 0;
    std::string state;
    std::string spawned_by;   ///< "-" or "W:R (spawn S)"
};

/// pid -> row, from the last `mpi ranks` table of `out`.
inline std::map<int, row> rows(const std::string& out) {
    std::map<int, row> m;
    std::regex re(R"(^[* ] (\d+)\s+(\S+)\s+(-?\d+)\s+(\d+)\s+(\S+)\s+(-|\S+:\d+ \(spawn \d+\))\s+(\S+)$)");
    for (auto& l : lines_of(out)) {
        if (l.rfind("  Rank  Comm world", 0) == 0) {
            m.clear();
        }
        std::smatch mm;
        if (std::regex_match(l, mm, re)) {
            m[std::stoi(mm[4])] = {std::stoi(mm[1]), mm[2], std::stoi(mm[3]), std::stoi(mm[4]), mm[5], mm[6]};
        }
    }
    return m;
}

inline bool has_line_containing(const std::string& out, const std::string& piece) {
    for (auto& l : lines_of(out)) {
        if (l.find(piece) != std::string::npos) {
            return true;
        }
    }
    return false;
}

inline std::string world0_of(const std::vector<self_report>& v) {
    for (auto& r : v) {
        if (r.parent == "-:-1") {
            return r.world;
        }
    }
    return {};
}

}  // namespace ompdbg::test::mpi2dd
