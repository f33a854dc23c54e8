#pragma once
// A program that counts (examples/counter.c) started on a simulated host (tests/cluster/),
// for the tests of remote processes (remote_targets.cpp, remote_files.cpp), and what they
// share.

#include <catch2/catch.hpp>

#include <chrono>
#include <regex>
#include <string>

#include "cli_common.hpp"
#include "cluster.hpp"

namespace ompdbg::test {

using namespace std::chrono_literals;

inline constexpr auto remote_step_timeout = 60s;

/// Masks what differs between two runs on one process (ompdbg's and gdb's): numbers in
/// values and addresses, pids.
inline std::string masked(const std::string& text) {
    std::string t = std::regex_replace(text, std::regex("0x[0-9a-f]+"), "0xADDR");
    t = std::regex_replace(t, std::regex(R"(n=\d+)"), "n=N");
    return std::regex_replace(t, std::regex(R"(process \d+)"), "process P");
}

/// The counter example running on a simulated host: its pid there (the first line it prints).
struct remote_counter {
    background_process proc;
    std::string pid;

    /// `program`: its path on that host.
    remote_counter(const simulated_cluster& cluster, const std::string& host,
                   const std::string& program = example_path("counter"))
        : proc(cluster.on_host(host, {program}), cluster.options()) {
        auto first = proc.next_line(remote_step_timeout);
        REQUIRE(first);
        pid = *first;
        REQUIRE(proc.wait_for_line(std::regex("^counter 3$"), remote_step_timeout));
    }

    /// The last "counter N" it printed so far.
    long last_value() const {
        static const std::regex re(R"(^counter (\d+)$)");
        long last = -1;
        for (auto& l : proc.consumed_lines()) {
            std::smatch m;
            if (std::regex_match(l, m, re)) {
                last = std::stol(m[1]);
            }
        }
        return last;
    }

    /// Checks that it keeps counting without a gap or a repeat (it ran on after a detach).
    void check_runs_on() {
        long from = last_value();
        INFO("counter lines: " << joined(proc.consumed_lines()));
        REQUIRE(proc.wait_for_line(std::regex("^counter " + std::to_string(from + 3) + "$"), remote_step_timeout));
        CHECK(first_break_in_sequence() == "");
    }

    /// The first place where the lines read so far do not go on by one ("counter 41 after
    /// counter 39, at line 45"), or "" when they all do: a failure names it in one line.
    std::string first_break_in_sequence() const {
        static const std::regex re(R"(^counter (\d+)$)");
        long prev = -1;
        const auto& lines = proc.consumed_lines();
        for (std::size_t i = 0; i < lines.size(); ++i) {
            std::smatch m;
            if (std::regex_match(lines[i], m, re)) {
                long v = std::stol(m[1]);
                if (prev >= 0 && v != prev + 1) {
                    return "counter " + std::to_string(v) + " after counter " + std::to_string(prev) + ", at line " +
                           std::to_string(i);
                }
                prev = v;
            } else if (i > 0) {
                return "a line that is not the counter's: \"" + lines[i] + "\", at line " + std::to_string(i);
            }
        }
        return "";
    }
};

}  // namespace ompdbg::test
