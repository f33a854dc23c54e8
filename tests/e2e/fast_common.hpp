#pragma once
// Helpers of the fast-breakpoint end-to-end tests (fast_breakpoints.cpp, fast_counting.cpp):
// the fast_loop target, its own ground truth, and `ompdbg --batch` on it.

#include <chrono>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "transcript.hpp"

namespace ompdbg::test::fast {

inline std::string fast_loop(const char* opt) {
    return std::string(targets_dir) + "/fast/fast_loop-gcc-dwarf5-" + opt;
}

/// "calls N sum S" as the program prints it for n calls by `threads` threads (static schedule).
inline std::string ground_truth(long n, int threads) {
    long sum = 3 * (n * (n - 1) / 2);
    long chunk = (n + threads - 1) / threads;
    for (long i = 0; i < n; ++i) {
        sum += i / chunk;
    }
    return "calls " + std::to_string(n) + " sum " + std::to_string(sum);
}

/// `ompdbg --batch` with `cmds` on `program ARGS...`, within two minutes.
inline run_result debug(const std::string& program, const std::vector<std::string>& cmds,
                        const std::vector<std::string>& args, run_options opts = run_options()) {
    using namespace std::chrono_literals;
    auto all = ex_args(cmds);
    all.push_back("--args");
    all.push_back(program);
    all.insert(all.end(), args.begin(), args.end());
    return ompdbg_batch(all, opts.timeout_after(120s));
}

}  // namespace ompdbg::test::fast
