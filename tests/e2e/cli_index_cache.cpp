// The index cache through the CLI (gdb's `set index-cache`): a second session reads the
// tables the first one wrote (a hit in `show index-cache stats`, as gdb counts them) and
// places every breakpoint where the first one and a session without the cache place them.
// Each test keeps the cache in a temporary directory it removes (never ~/.cache), named
// both in the environment and by `set index-cache directory`, so that nothing else is
// written.
#include <catch2/catch.hpp>

#include "cli_common.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
namespace fs = std::filesystem;

namespace {

struct cache_dirs {
    fs::path root;
    cache_dirs() {
        std::string tmpl = (fs::temp_directory_path() / "ompdbg-index-cache-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        root = tmpl;
    }
    ~cache_dirs() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    cache_dirs(const cache_dirs&) = delete;
    cache_dirs& operator=(const cache_dirs&) = delete;
};

std::size_t files_in(const fs::path& dir) {
    std::error_code ec;
    std::size_t n = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        ++n;
    }
    return n;
}

/// The numbers of `show index-cache stats` ("  Cache hits (this session): N").
std::pair<int, int> stats_of(const std::string& out) {
    std::smatch m;
    static const std::regex hits("^  Cache hits \\(this session\\): ([0-9]+)$");
    static const std::regex misses("^Cache misses \\(this session\\): ([0-9]+)$");
    int h = -1, s = -1;
    for (const auto& l : lines_of(out)) {
        if (std::regex_match(l, m, hits)) {
            h = std::stoi(m[1]);
        } else if (std::regex_match(l, m, misses)) {
            s = std::stoi(m[1]);
        }
    }
    return {h, s};
}

/// The lines about breakpoints: where `break` placed them, `info breakpoints`, the hits.
std::vector<std::string> breakpoint_lines(const std::string& out) {
    std::vector<std::string> keep;
    static const std::regex pid("\\(process [0-9]+\\)");
    for (const auto& l : lines_of(out)) {
        if (l.find("reakpoint") != std::string::npos || l.starts_with("\t") || l.starts_with("1.") ||
            l.starts_with("2.") || l.starts_with("Num ")) {
            keep.push_back(std::regex_replace(l, pid, "(process PID)"));
        }
    }
    return keep;
}

}  // namespace

TEST_CASE("the index cache: a second session reads the first one's tables and places the same breakpoints",
          "[cli][index-cache]") {
    auto program = GENERATE(example_path("cxx_features"), example_path("cxx_features", "clang", 5));
    INFO(program);
    cache_dirs dirs;
    const fs::path from_env = dirs.root / "env", from_command = dirs.root / "set";
    // geometry::area and twice have several locations; every library the program loads
    // (libc with its separate debug information, ld.so) is searched for both again.
    std::vector<std::string> cmds{"set index-cache directory " + from_command.string(),
                                  "break geometry::area", "break twice", "info breakpoints", "run",
                                  "info breakpoints", "show index-cache stats"};
    auto session = [&](const std::vector<std::string>& c) {
        auto r = ompdbg_batch([&] {
            auto args = ex_args(c);
            args.push_back(program);
            return args;
        }(), run_options().timeout_after(120s).set_env("OMPDBG_INDEX_CACHE", from_env.string()));
        INFO(r.all());
        REQUIRE_FALSE(r.timed_out);
        CHECK(r.term_signal == 0);
        return r;
    };
    auto cold = session(cmds);
    auto [cold_hits, cold_misses] = stats_of(cold.out);
    INFO("first session:\n" << cold.all());
    CHECK(cold_hits == 0);
    CHECK(cold_misses >= 2);   // the program and libc at least
    CHECK(files_in(from_command) >= 2);   // a file without a build-id is not a miss and has none
    CHECK(files_in(from_command) <= static_cast<std::size_t>(cold_misses));
    CHECK(files_in(from_env) == 0);   // the directory set by the command, from its first lookup on

    auto warm = session(cmds);
    auto [warm_hits, warm_misses] = stats_of(warm.out);
    INFO("second session:\n" << warm.all());
    CHECK(warm_hits == cold_misses);
    CHECK(warm_misses == 0);

    std::vector<std::string> off_cmds = cmds;
    off_cmds[0] = "set index-cache enabled off";
    auto off = session(off_cmds);
    CHECK(stats_of(off.out) == std::pair{0, 0});
    CHECK(files_in(from_env) == 0);

    auto placed = breakpoint_lines(cold.out);
    CHECK(placed.size() >= 8);   // real lines were compared: 2 breakpoints, their locations, 2 listings
    CHECK(breakpoint_lines(warm.out) == placed);
    CHECK(breakpoint_lines(off.out) == placed);
}

TEST_CASE("the index cache: an unwritable directory only shows in show index-cache stats", "[cli][index-cache]") {
    cache_dirs dirs;
    const fs::path file = dirs.root / "a-file";
    { std::ofstream(file) << "not a directory\n"; }
    const std::string program = example_path("cxx_features");
    auto r = ompdbg_batch({"-ex", "set index-cache directory " + (file / "cache").string(), "-ex", "break twice",
                           "-ex", "show index-cache stats", "-ex", "show index-cache enabled", program},
                          run_options().timeout_after(60s).set_env("OMPDBG_INDEX_CACHE", (dirs.root / "env").string()));
    INFO(r.all());
    REQUIRE(r.ok());
    CHECK(r.err.empty());
    auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].starts_with("Breakpoint 1 at "));
    CHECK(lines[1] == "  Cache hits (this session): 0");
    CHECK(lines[2] == "Cache misses (this session): 1");
    CHECK(lines[3] == "The index cache directory \"" + (file / "cache").string() + "\" cannot be written: Not a directory.");
    CHECK(lines[4] == "The index cache is on.");
}

TEST_CASE("the index cache: a second session reads the symbol-name tables the first wrote and answers the same",
          "[cli][index-cache]") {
    // `info address` of a libc function and of a name no library has looks each library's
    // symbol tables up by name; the first session writes their hashed names, the second
    // reads them (OMPDBG_LOG=dwarf says which file was a hit) and prints the same.
    cache_dirs dirs;
    const std::string program = example_path("cxx_features");
    const std::vector<std::string> cmds{"break main", "run", "info address malloc", "info address no_such_symbol_here",
                                        "info symbol malloc", "show index-cache stats"};
    auto session = [&](bool on) {
        auto args = ex_args(cmds);
        args.push_back(program);
        auto r = ompdbg_batch(args, run_options()
                                        .timeout_after(120s)
                                        .set_env("OMPDBG_INDEX_CACHE", on ? dirs.root.string() : "off")
                                        .set_env("OMPDBG_LOG", "dwarf"));
        INFO(r.all());
        REQUIRE_FALSE(r.timed_out);
        CHECK(r.term_signal == 0);
        return r;
    };
    // The log lines about symbol tables, and what the user sees (without the statistics
    // and the process id).
    auto symbol_lines = [](const std::string& err, const std::string& what) {
        std::vector<std::string> out;
        for (const auto& l : lines_of(err)) {
            if (l.find("index cache: " + what + " ") != std::string::npos && l.ends_with(".ompdbg-symbols")) {
                out.push_back(l);
            }
        }
        return out;
    };
    auto shown = [](const std::string& out) {
        std::vector<std::string> keep;
        static const std::regex pid("\\(process [0-9]+\\)");
        for (const auto& l : lines_of(out)) {
            if (l.find("Cache ") == std::string::npos) {
                keep.push_back(std::regex_replace(l, pid, "(process PID)"));
            }
        }
        return keep;
    };
    auto cold = session(true);
    INFO("first session:\n" << cold.all());
    auto cold_misses = symbol_lines(cold.err, "miss");
    CHECK(cold_misses.size() >= 1);   // libc at least
    CHECK(symbol_lines(cold.err, "hit").empty());
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dirs.root)) {
        files += e.path().extension() == ".ompdbg-symbols" ? 1 : 0;
    }
    CHECK(files == cold_misses.size());

    auto warm = session(true);
    INFO("second session:\n" << warm.all());
    CHECK(symbol_lines(warm.err, "miss").empty());
    auto warm_hits = symbol_lines(warm.err, "hit");
    CHECK(warm_hits.size() == cold_misses.size());
    for (std::size_t i = 0; i < std::min(warm_hits.size(), cold_misses.size()); ++i) {
        CHECK(warm_hits[i].substr(warm_hits[i].find(dirs.root.string())) ==
              cold_misses[i].substr(cold_misses[i].find(dirs.root.string())));
    }
    auto [warm_hit_count, warm_miss_count] = stats_of(warm.out);
    CHECK(warm_miss_count == 0);
    CHECK(warm_hit_count >= static_cast<int>(warm_hits.size()));

    auto off = session(false);
    CHECK(symbol_lines(off.err, "hit").empty());
    CHECK(symbol_lines(off.err, "miss").empty());
    auto seen = shown(cold.out);
    CHECK(std::any_of(seen.begin(), seen.end(), [](const std::string& l) { return l.starts_with("Symbol \"malloc\""); }));
    CHECK(shown(warm.out) == seen);
    CHECK(shown(off.out) == seen);
}
