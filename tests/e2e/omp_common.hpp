#pragma once
// Helpers of the OpenMP end-to-end tests (omp_ompd.cpp, omp_catch.cpp): the examples/openmp
// programs, `ompdbg --batch` on them, and the rows of their output the tests compare.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace ompdbg::test::omp {

inline const std::string omp_runtime_dir = std::string(cache_dir) + "/llvm-openmp-19.1.7/lib";

inline std::string omp_example(const std::string& name) {
    return std::string(examples_dir) + "/openmp/" + name;
}

/// False (with the reason in the test log) when the OMPD-enabled runtime is not built.
inline bool have_omp_examples() {
    if (!std::filesystem::exists(omp_example("omp_nested"))) {
        WARN("skipped: examples/openmp not built (no OMPD-enabled libomp in " + omp_runtime_dir +
             "; run scripts/bootstrap)");
        return false;
    }
    return true;
}

inline run_result ompdbg_on(const std::string& program, const std::vector<std::string>& cmds,
                            run_options opts = run_options().timeout_after(90s)) {
    std::vector<std::string> args;
    for (const auto& c : cmds) {
        args.push_back("-ex");
        args.push_back(c);
    }
    args.push_back(program);
    return ompdbg_batch(args, opts);
}

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

/// key=value pairs of the program's "truth: <tag> k=v ..." lines with that tag.
inline std::vector<std::map<std::string, std::string>> truths(const std::string& out, const std::string& tag) {
    std::vector<std::map<std::string, std::string>> all;
    static const std::regex kv(R"((\w+)=([^ ]+))");
    for (const auto& l : lines_of(out)) {
        auto pos = l.find("truth: " + tag);
        if (pos == std::string::npos) {
            continue;
        }
        std::map<std::string, std::string> m;
        std::string rest = l.substr(pos + 7 + tag.size());
        for (std::sregex_iterator it(rest.begin(), rest.end(), kv), end; it != end; ++it) {
            m[(*it)[1]] = (*it)[2];
        }
        all.push_back(m);
    }
    return all;
}

struct omp_thread_row {
    std::string id;
    int lwp = 0;
    std::string omp_num, state, level, team;
    std::string wait;
    bool is_openmp = false;
    bool selected = false;
};

/// Rows of `omp threads`.
inline std::vector<omp_thread_row> thread_rows(const std::string& out) {
    std::vector<omp_thread_row> rows;
    static const std::regex row(R"(^([* ]) (\S+)\s+(\d+)\s+(\S+)\s+(ompt_state_\w+|state \S+)\s+(\S+)\s+(\S+)\s+(\S+))");
    static const std::regex non(R"(^([* ]) (\S+)\s+(\d+)\s+-\s+\(not an OpenMP thread\))");
    for (const auto& l : lines_of(out)) {
        std::smatch m;
        if (std::regex_search(l, m, row)) {
            rows.push_back({m[2], std::stoi(m[3]), m[4], m[5], m[7], m[8], m[6], true, m[1] == "*"});
        } else if (std::regex_search(l, m, non)) {
            rows.push_back({m[2], std::stoi(m[3]), "-", "", "", "", "", false, m[1] == "*"});
        }
    }
    return rows;
}

/// "ICV name  scope  value" rows of `omp icvs` (or gdb's `ompd icvs`).
inline std::map<std::string, std::string> icv_rows(const std::string& out) {
    std::map<std::string, std::string> m;
    static const std::regex row(R"(^([a-z][a-z-]+-var)\s+(address_space|thread|parallel|task|implicit_task)\s+(.*)$)");
    for (const auto& l : lines_of(out)) {
        std::smatch sm;
        if (std::regex_search(l, sm, row)) {
            std::string v = sm[3];
            while (!v.empty() && v.back() == ' ') {
                v.pop_back();
            }
            m[sm[1]] = v;
        }
    }
    return m;
}

}  // namespace ompdbg::test::omp
