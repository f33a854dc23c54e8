// Test helpers over a live tracer::process: a symbol's value as readelf lists it (the
// ground truth for addresses), and running a process until a thread hits a function.
#pragma once

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>

#include "ompdbg/tracer/process.hpp"
#include "process_runner.hpp"

namespace ompdbg::test {

/// st_value of `symbol` in `file` according to `readelf -sW` (locals included).
inline std::optional<std::uint64_t> readelf_symbol(const std::string& file, const std::string& symbol) {
    auto r = run({"readelf", "-sW", file});
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
        std::istringstream ls(l);
        std::string num, value, size, type, bind, vis, ndx, name;
        if (ls >> num >> value >> size >> type >> bind >> vis >> ndx >> name && name == symbol) {
            return std::stoull(value, nullptr, 16);
        }
    }
    return std::nullopt;
}

/// Resumes `p` until a thread hits `function` of `program` (the executable `p` runs, its
/// address from readelf); returns that thread, the breakpoint removed again. Fails the
/// test when the program ends first or nothing is hit within 200 stops.
inline pid_t run_to_symbol(tracer::process& p, const std::string& program, const std::string& function) {
    auto sym = readelf_symbol(program, function);
    REQUIRE(sym);
    const tracer::loaded_module* exe = nullptr;
    for (const auto& m : p.modules()) {
        if (m.is_executable) {
            exe = &m;
        }
    }
    REQUIRE(exe != nullptr);
    virt_addr bp = exe->to_runtime(*sym);
    p.add_breakpoint_site(bp);
    for (int i = 0; i < 200; ++i) {
        p.resume();
        auto r = p.wait_for_stop(30000);
        REQUIRE(r.has_value());
        REQUIRE_FALSE(r->is_process_end());
        if (r->kind == tracer::stop_kind::breakpoint && r->breakpoint_addr == bp) {
            p.remove_breakpoint_site(bp);
            return r->tid;
        }
    }
    FAIL(function + " was never reached");
    return 0;
}

}  // namespace ompdbg::test
