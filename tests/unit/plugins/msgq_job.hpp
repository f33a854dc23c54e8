#pragma once
// A real `mpirun -np N` job of an examples/mpi program for the message-queue tests: started
// in the background, synchronised on the MPI-LOG lines the program prints about itself
// (never on time), and torn down (every rank and mpirun killed) whatever the test does.

#include <signal.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace ompdbg::test::msgq {

/// One MPI-LOG line as key → value ("rank" → "1", "op" → "irecv", ...).
using log_entry = std::map<std::string, std::string>;

inline std::optional<log_entry> parse_log_line(const std::string& line) {
    auto pos = line.find("MPI-LOG ");
    if (pos == std::string::npos) {
        return std::nullopt;
    }
    log_entry e;
    std::istringstream in(line.substr(pos + 8));
    for (std::string kv; in >> kv;) {
        auto eq = kv.find('=');
        if (eq != std::string::npos) {
            e[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
    }
    return e;
}

inline std::string mpirun_path() { return std::string(cache_dir) + "/openmpi-4.1.4/bin/mpirun"; }
inline std::string mpi_example(const std::string& name) {
    return std::string(examples_dir) + "/mpi/" + name;
}

class mpi_job {
public:
    /// Starts `mpirun -np ranks PROGRAM` (root allowed, oversubscribed, ranks yielding when
    /// idle so that 4 busy-polling ranks do not starve a 2-core machine).
    mpi_job(const std::string& program, int ranks, const std::string& mpirun = mpirun_path())
        : ranks_(ranks),
          proc_({mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                 "-np", std::to_string(ranks), program},
                run_options().timeout_after(std::chrono::minutes(5))) {}
    ~mpi_job() { kill(); }
    mpi_job(const mpi_job&) = delete;
    mpi_job& operator=(const mpi_job&) = delete;

    /// Waits until every rank has printed a line whose key `key` has `value` (e.g.
    /// "state", "holding"); false on timeout or when mpirun ends first.
    bool wait_all(const std::string& key, const std::string& value,
                  std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
        return wait_until([&](const log_entry& e) {
            auto it = e.find(key);
            return it != e.end() && it->second == value;
        }, timeout);
    }
    /// Waits until every rank has printed a line that satisfies `pred`.
    template <typename Pred>
    bool wait_until(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        auto count = [&] {
            std::set<std::string> ranks;
            for (const auto& e : entries_) {
                if (e.count("rank") && pred(e)) {
                    ranks.insert(e.at("rank"));
                }
            }
            return static_cast<int>(ranks.size());
        };
        while (count() < ranks_) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return false;
            }
            auto line = proc_.next_line(left);
            if (!line) {
                return false;
            }
            if (auto e = parse_log_line(*line)) {
                if (e->count("rank") && e->count("pid")) {
                    pids_[std::stoi(e->at("rank"))] = std::stoi(e->at("pid"));
                }
                entries_.push_back(std::move(*e));
            }
        }
        return true;
    }

    /// Every MPI-LOG line read so far.
    const std::vector<log_entry>& entries() const { return entries_; }
    /// Lines of one rank with a given key/value ("op" → "irecv").
    std::vector<log_entry> of(int rank, const std::string& key, const std::string& value) const {
        std::vector<log_entry> out;
        for (const auto& e : entries_) {
            if (e.count("rank") && std::stoi(e.at("rank")) == rank && e.count(key) && e.at(key) == value) {
                out.push_back(e);
            }
        }
        return out;
    }
    pid_t pid_of(int rank) const { return pids_.at(rank); }
    int ranks() const { return ranks_; }
    pid_t mpirun_pid() const { return proc_.pid(); }

    /// SIGUSR1 to every rank (the examples' hold_until_sigusr1).
    void release() {
        for (auto [rank, pid] : pids_) {
            (void)rank;
            ::kill(pid, SIGUSR1);
        }
    }
    /// Waits for mpirun to finish; its result (nullopt on timeout).
    std::optional<run_result> wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
        return proc_.wait_exit(timeout);
    }
    /// Kills every rank and mpirun (idempotent).
    void kill() {
        for (auto [rank, pid] : pids_) {
            (void)rank;
            if (proc_.running()) {  // a finished job's pids may be reused
                ::kill(pid, SIGKILL);
            }
        }
        proc_.kill();
    }

private:
    int ranks_;
    background_process proc_;
    std::vector<log_entry> entries_;
    std::map<int, pid_t> pids_;
};

}  // namespace ompdbg::test::msgq
