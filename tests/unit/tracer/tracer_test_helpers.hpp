#pragma once
// Helpers for the libtracer tests: paths of the target programs, ground truth from nm and
// objdump, and waits that cannot hang.

#include <catch2/catch.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"

namespace tracer_test {

inline std::string program(const std::string& name) {
    return std::string(ompdbg::test::targets_dir) + "/tracer/" + name;
}

/// Address of `symbol` in `path` according to `nm` (a file address); `dynamic`: `nm -D`.
inline std::uint64_t nm_address(const std::string& path, const std::string& symbol, bool dynamic = false) {
    auto r = dynamic ? ompdbg::test::run({"nm", "-D", path}) : ompdbg::test::run({"nm", path});
    REQUIRE(r.ok());
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string addr, type, name;
        if (ls >> addr >> type >> name && (name == symbol || name.rfind(symbol + "@", 0) == 0)) {
            return std::stoull(addr, nullptr, 16);
        }
    }
    FAIL("nm does not list " << symbol);
    return 0;
}

/// File addresses of the instructions of `function`, from objdump.
inline std::vector<std::uint64_t> objdump_instructions(const std::string& path, const std::string& function) {
    auto r = ompdbg::test::run({"objdump", "-d", "--disassemble=" + function, path});
    REQUIRE(r.ok());
    std::vector<std::uint64_t> out;
    std::istringstream in(r.out);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.find("<" + function + ">:") != std::string::npos) {
            inside = true;
            continue;
        }
        if (!inside) {
            continue;
        }
        auto colon = line.find(':');
        if (colon == std::string::npos || line.empty() || line[0] != ' ') {
            continue;
        }
        out.push_back(std::stoull(line.substr(0, colon), nullptr, 16));
    }
    return out;
}

/// The executable's load bias (0 for non-PIE).
inline std::uint64_t exe_bias(ompdbg::tracer::process& p) {
    REQUIRE(!p.modules().empty());
    REQUIRE(p.modules().front().is_executable);
    return p.modules().front().load_bias;
}

/// Waits for the next stop at most `ms`; a test never hangs: on timeout the process is
/// killed and the test fails. Shared-library events are resumed over (as the app does)
/// unless `keep_library_events`.
inline ompdbg::tracer::stop_reason wait_stop(ompdbg::tracer::process& p, int ms = 20000,
                                             bool keep_library_events = false) {
    for (;;) {
        auto r = p.wait_for_stop(ms);
        if (!r) {
            p.kill();
            FAIL("the target did not stop within " << ms << " ms");
        }
        if (r->kind == ompdbg::tracer::stop_kind::library_event && !keep_library_events) {
            p.resume();
            continue;
        }
        return *r;
    }
}

/// True when the running target reports nothing but shared-library events (resumed over)
/// for `ms` milliseconds.
inline bool keeps_running(ompdbg::tracer::process& p, int ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        auto r = p.wait_for_stop(static_cast<int>(std::max<long>(0, left.count())));
        if (!r) {
            return true;
        }
        if (r->kind != ompdbg::tracer::stop_kind::library_event) {
            return false;
        }
        p.resume();
    }
}

/// A temporary file removed at scope exit.
struct temp_file {
    std::filesystem::path path;
    temp_file() {
        char tmpl[] = "/tmp/ompdbg-tracer-XXXXXX";
        int fd = ::mkstemp(tmpl);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = tmpl;
    }
    ~temp_file() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    std::string contents() const {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
};

}  // namespace tracer_test
