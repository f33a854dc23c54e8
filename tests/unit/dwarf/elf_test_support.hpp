#pragma once
// Shared helpers of the libdwarfview tests: paths of the test programs, source markers,
// and ground truth from independent tools (readelf, nm, objdump, gdb) run with a timeout.

#include <catch2/catch.hpp>

#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ompdbg::test::dwarf {

/// A built test program: tests/targets/dwarf/NAME-CC-dwarfV-ON.
inline std::string target(const std::string& name, const std::string& cc, int dw, int opt) {
    return std::string(targets_dir) + "/dwarf/" + name + "-" + cc + "-dwarf" + std::to_string(dw) +
           "-O" + std::to_string(opt);
}

/// Every gcc/clang × DWARF 4/5 build of NAME at the given optimisation levels.
inline std::vector<std::string> variants(const std::string& name, std::vector<int> opts = {0, 2}) {
    std::vector<std::string> out;
    for (const char* cc : {"gcc", "clang"}) {
        for (int dw : {4, 5}) {
            for (int o : opts) {
                out.push_back(target(name, cc, dw, o));
            }
        }
    }
    return out;
}

inline bool is_optimized(const std::string& path) { return path.ends_with("-O2"); }
inline bool is_clang(const std::string& path) { return path.find("-clang-") != std::string::npos; }

/// Line number of the line of tests/targets/dwarf/SOURCE holding "MARK: marker".
inline int marker_line(const std::string& source, const std::string& marker) {
    std::ifstream in(std::string(targets_source_dir) + "/dwarf/" + source);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        auto p = line.find("MARK: " + marker);
        if (p != std::string::npos) {
            auto end = p + 6 + marker.size();
            if (end == line.size() || line[end] == ' ') {
                return n;
            }
        }
    }
    FAIL("no marker " << marker << " in " << source);
    return 0;
}

/// Runs a tool and returns its stdout; fails the test when it does not succeed.
inline std::string tool_output(std::vector<std::string> argv) {
    auto r = run(argv, run_options().timeout_after(std::chrono::seconds(60)));
    INFO(argv[0] << ": " << r.err);
    REQUIRE(r.ok());
    return r.out;
}

/// `gdb -batch -nx` on `binary` with the given commands; stdout and stderr together.
inline std::string gdb(const std::string& binary, const std::vector<std::string>& commands) {
    std::vector<std::string> argv{"gdb", "-batch", "-nx", "-iex", "set debuginfod enabled off",
                                  "-iex", "set pagination off", "-iex", "set width 0"};
    for (auto& c : commands) {
        argv.push_back("-ex");
        argv.push_back(c);
    }
    argv.push_back(binary);
    auto r = run(argv, run_options().timeout_after(std::chrono::seconds(60)));
    REQUIRE_FALSE(r.timed_out);
    return r.out + r.err;
}

inline std::string fmt_hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

/// Every 0x... number in `text`, in order.
inline std::vector<std::uint64_t> hex_numbers(const std::string& text) {
    std::vector<std::uint64_t> out;
    std::regex re("0x([0-9a-fA-F]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        out.push_back(std::stoull((*it)[1].str(), nullptr, 16));
    }
    return out;
}

/// The addresses of the locations of breakpoint 1 after `break SPEC` (gdb prints one
/// address for a single location, a table of them for several).
inline std::vector<std::uint64_t> gdb_breakpoint_addresses(const std::string& binary, const std::string& spec) {
    std::string out = gdb(binary, {"break " + spec, "info breakpoints"});
    std::vector<std::uint64_t> addrs;
    std::istringstream in(out);
    std::regex single(R"(^1\s+breakpoint\s+keep\s+y\s+(0x[0-9a-f]+))");
    std::regex multi(R"(^1\.\d+\s+y\s+(0x[0-9a-f]+))");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, single) || std::regex_search(line, m, multi)) {
            addrs.push_back(std::stoull(m[1].str(), nullptr, 16));
        }
    }
    std::sort(addrs.begin(), addrs.end());
    return addrs;
}

}  // namespace ompdbg::test::dwarf
