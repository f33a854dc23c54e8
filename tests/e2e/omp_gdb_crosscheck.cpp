// The anchor: gdb with LLVM's OMPD python plugin (libomp-19-dev's
// /usr/lib/llvm-19/share/gdb/python/ompd) and ompdbg, on the same program at the same
// breakpoint, must report the same parallel regions (levels, team sizes, threads) and ICVs.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

using namespace ompdbg::test;
namespace fs = std::filesystem;

namespace {

const std::string gdb_ompd_plugin = "/usr/lib/llvm-19/share/gdb/python/ompd/__init__.py";
const std::string runtime_dir = std::string(cache_dir) + "/llvm-openmp-19.1.7/lib";

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        out.push_back(l);
    }
    return out;
}

std::map<std::string, std::string> icvs(const std::string& out) {
    std::map<std::string, std::string> m;
    static const std::regex row(R"(^([a-z][a-z-]+-var)\s+(address_space|thread|parallel|task|implicit_task)\s+(.*)$)");
    for (const auto& l : lines(out)) {
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

struct region {
    int level = 0, team = 0;
    std::vector<std::string> master_state;
    bool operator==(const region&) const = default;
};

}  // namespace

TEST_CASE("ompdbg and gdb's OMPD plugin agree on regions, team sizes and ICVs", "[ompd][e2e][gdb]") {
    const std::string program = std::string(examples_dir) + "/openmp/omp_nested";
    if (!fs::exists(program) || !fs::exists(gdb_ompd_plugin)) {
        WARN("skipped: needs examples/openmp (scripts/bootstrap) and " + gdb_ompd_plugin);
        return;
    }
    auto opts = run_options()
                    .timeout_after(120s)
                    .set_env("OMP_DEBUG", "enabled")
                    .set_env("LD_LIBRARY_PATH", runtime_dir);
    auto gdb = run({"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex",
                    "source " + gdb_ompd_plugin, "-ex", "break omp_checkpoint", "-ex", "run", "-ex",
                    "ompd init", "-ex", "ompd parallel", "-ex", "ompd icvs", program},
                   opts);
    INFO("gdb:\n" << gdb.all());
    REQUIRE(gdb.out.find("Loaded OMPD lib successfully!") != std::string::npos);

    auto ours = ompdbg_batch({"-ex", "break omp_checkpoint", "-ex", "run", "-ex", "omp parallel", "-ex",
                              "omp icvs", program},
                             run_options().timeout_after(120s));
    INFO("ompdbg:\n" << ours.all());
    REQUIRE(ours.ok());

    // gdb prints the selected thread's region and its enclosing ones, innermost first:
    // "Parallel Region: Nesting Level 2: Team Size: 3" then one row per team member.
    std::vector<region> gdb_chain;
    static const std::regex gdb_region(R"(Parallel Region: Nesting Level (\d+): Team Size: (\d+))");
    static const std::regex gdb_master(R"(^\s+0 \(master\) (\S+))");
    for (const auto& l : lines(gdb.out)) {
        std::smatch m;
        if (std::regex_search(l, m, gdb_region)) {
            gdb_chain.push_back({std::stoi(m[1]), std::stoi(m[2]), {}});
        } else if (std::regex_search(l, m, gdb_master) && !gdb_chain.empty()) {
            gdb_chain.back().master_state.push_back(m[1]);
        }
    }
    REQUIRE(gdb_chain.size() == 2);

    // ompdbg prints the whole tree outermost first; every region of gdb's chain is in it with
    // the same level, team size and the same state for team member 0.
    std::vector<region> ours_all;
    static const std::regex our_region(R"(Parallel region at level (\d+): team size (\d+))");
    static const std::regex our_master(R"(^\s+thread 0: LWP \d+ \(thread \S+\) (\S+))");
    for (const auto& l : lines(ours.out)) {
        std::smatch m;
        if (std::regex_search(l, m, our_region)) {
            ours_all.push_back({std::stoi(m[1]), std::stoi(m[2]), {}});
        } else if (std::regex_search(l, m, our_master) && !ours_all.empty()) {
            ours_all.back().master_state.push_back(m[1]);
        }
    }
    for (const auto& r : gdb_chain) {
        CAPTURE(r.level, r.team);
        CHECK(std::find(ours_all.begin(), ours_all.end(), r) != ours_all.end());
    }

    // Every ICV gdb shows for the stopped thread has the same value in ompdbg.
    auto theirs = icvs(gdb.out);
    auto mine = icvs(ours.out);
    REQUIRE(theirs.size() >= 20);
    for (const auto& [name, value] : theirs) {
        CAPTURE(name);
        REQUIRE(mine.count(name) == 1);
        CHECK(mine[name] == value);
    }
}
