// The anchor: gdb with LLVM's OMPD python plugin (libomp-19-dev's
// /usr/lib/llvm-19/share/gdb/python/ompd) and ompdbg, on the same program at the same
// breakpoint, must report the same threads, team sizes and ICV values.
//
// What gdb 13 + the LLVM 19 plugin can answer here (seen in this test's log):
// - `thread apply all ompd icvs` works: every ICV of every OpenMP thread, which holds each
//   thread's number, team size and nesting level. This is what is compared, thread by thread.
// - `ompd parallel` prints the selected thread's innermost region header, then fails while
//   listing the team (a Python SystemError from ompdModule.call_ompd_get_state, raised when
//   the plugin's print callback builds a gdb `printf` command from libompd's text); the
//   header is compared.
// - `ompd threads` only knows threads that reported a stop event to the plugin (here the
//   one at the breakpoint), so it is not used.

#include <catch2/catch.hpp>

#include <algorithm>
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

using icv_map = std::map<std::string, std::string>;

/// The ICV rows of `thread apply all ... icvs`, one map per "Thread N (... (LWP n) ...):"
/// block, keyed by LWP.
std::map<int, icv_map> icvs_by_thread(const std::string& out) {
    std::map<int, icv_map> all;
    static const std::regex header(R"(^Thread \d+ \(.*\(LWP (\d+)\).*\):\s*$)");
    static const std::regex row(R"(^([a-z][a-z-]+-var)\s+(address_space|thread|parallel|task|implicit_task)\s+(.*)$)");
    icv_map* current = nullptr;
    for (const auto& l : lines(out)) {
        std::smatch sm;
        if (std::regex_search(l, sm, header)) {
            current = &all[std::stoi(sm[1])];
        } else if (current != nullptr && std::regex_search(l, sm, row)) {
            std::string v = sm[3];
            while (!v.empty() && v.back() == ' ') {
                v.pop_back();
            }
            (*current)[sm[1]] = v;
        }
    }
    return all;
}

}  // namespace

TEST_CASE("ompdbg and gdb's OMPD plugin agree on threads, team sizes and ICVs", "[ompd][e2e][gdb]") {
    const std::string program = std::string(examples_dir) + "/openmp/omp_nested";
    if (!fs::exists(program)) {
        WARN("skipped: needs examples/openmp (scripts/bootstrap builds the OMPD-enabled libomp)");
        return;
    }
    if (!fs::exists(gdb_ompd_plugin)) {
        WARN("skipped: gdb's OMPD plugin " + gdb_ompd_plugin + " is not installed (libomp-19-dev)");
        return;
    }
    auto opts = run_options()
                    .timeout_after(120s)
                    .set_env("OMP_DEBUG", "enabled")
                    .set_env("LD_LIBRARY_PATH", runtime_dir);
    auto gdb = run({"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex",
                    "source " + gdb_ompd_plugin, "-ex", "break omp_checkpoint", "-ex", "run", "-ex",
                    "ompd init", "-ex", "thread apply all ompd icvs", "-ex", "ompd parallel", program},
                   opts);
    INFO("gdb:\n" << gdb.all());
    REQUIRE(gdb.out.find("Loaded OMPD lib successfully!") != std::string::npos);

    auto ours = ompdbg_batch({"-ex", "break omp_checkpoint", "-ex", "run", "-ex", "thread apply all omp icvs",
                              "-ex", "omp parallel", program},
                             run_options().timeout_after(120s));
    INFO("ompdbg:\n" << ours.all());
    REQUIRE(ours.ok());

    // Same threads: the two runs are different processes, so threads are matched by what
    // they are (their ICVs, which include thread-num-var, team-size-var and levels-var), as
    // multisets: every thread gdb shows has a twin in ompdbg's answer, and no thread is left.
    auto theirs = icvs_by_thread(gdb.out);
    auto mine = icvs_by_thread(ours.out);
    REQUIRE(theirs.size() == 6);
    REQUIRE(mine.size() == theirs.size());
    std::vector<icv_map> left;
    for (const auto& [lwp, icvs] : mine) {
        left.push_back(icvs);
    }
    for (const auto& [lwp, icvs] : theirs) {
        CAPTURE(lwp);
        REQUIRE(icvs.size() >= 20);
        REQUIRE(icvs.count("thread-num-var") == 1);
        REQUIRE(icvs.count("team-size-var") == 1);
        auto twin = std::find_if(left.begin(), left.end(), [&](const icv_map& m) {
            return std::all_of(icvs.begin(), icvs.end(), [&](const auto& kv) {
                auto it = m.find(kv.first);
                return it != m.end() && it->second == kv.second;
            });
        });
        if (twin == left.end()) {
            // Say which ICVs differ from the closest thread of ours with the same number.
            for (const auto& m : left) {
                if (m.count("thread-num-var") && m.at("thread-num-var") == icvs.at("thread-num-var")) {
                    for (const auto& [name, value] : icvs) {
                        CAPTURE(name, value);
                        CHECK(m.count(name) == 1);
                        if (m.count(name)) {
                            CHECK(m.at(name) == value);
                        }
                    }
                    break;
                }
            }
            FAIL("no thread of ompdbg's answer has the ICVs gdb shows for LWP " << lwp);
        }
        left.erase(twin);
    }
    CHECK(left.empty());

    // The selected thread's innermost region: same level and team size.
    std::smatch g, o;
    REQUIRE(std::regex_search(gdb.out, g, std::regex(R"(Parallel Region: Nesting Level (\d+): Team Size: (\d+))")));
    REQUIRE(std::regex_search(ours.out, o,
                              std::regex(R"(\n\s+Parallel region at level (\d+): team size (\d+))")));
    CHECK(g[1] == o[1]);
    CHECK(g[2] == o[2]);
}
