#pragma once
// Running the unwinder / thread_db target programs under tracer::process: launch with ASLR
// off (as gdb does, so that run-time addresses equal gdb's), run to a breakpoint at a file
// address of the executable. Every wait has a deadline; the process dies with the test.

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ompdbg/tracer/process.hpp"

namespace ompdbg::test {

/// Starts `path args...` stopped at exec; its stdout goes to `stdout_path`.
inline std::unique_ptr<tracer::process> launch_traced(const std::string& path,
                                                      const std::vector<std::string>& args,
                                                      const std::string& stdout_path = "/dev/null") {
    tracer::launch_options opts;
    opts.disable_aslr = true;
    opts.stdout_path = stdout_path;
    return tracer::process::launch(path, args, opts);
}

/// Waits for the next stop that is not a library load, thread creation/exit or signal
/// (those are resumed over; signals are delivered on resume). Fails the test after
/// `timeout_ms`.
inline tracer::stop_reason wait_interesting_stop(tracer::process& p, int timeout_ms = 30000) {
    for (;;) {
        auto r = p.wait_for_stop(timeout_ms);
        if (!r) {
            p.kill();
            FAIL("the target did not stop within " << timeout_ms << " ms");
        }
        switch (r->kind) {
        case tracer::stop_kind::library_event:
        case tracer::stop_kind::thread_created:
        case tracer::stop_kind::thread_exited:
        case tracer::stop_kind::signal:
            p.resume();
            continue;
        default:
            return *r;
        }
    }
}

/// Plants a breakpoint at file address `file_addr` of the executable (e.g. where gdb put
/// its own), resumes and returns the thread that hit it.
inline pid_t run_to_breakpoint(tracer::process& p, std::uint64_t file_addr, int timeout_ms = 30000) {
    REQUIRE(!p.modules().empty());
    REQUIRE(p.modules().front().is_executable);
    p.add_breakpoint_site(p.modules().front().to_runtime(file_addr));
    p.resume();
    auto r = wait_interesting_stop(p, timeout_ms);
    INFO("stop kind " << static_cast<int>(r.kind) << " signo " << r.signo);
    REQUIRE(r.kind == tracer::stop_kind::breakpoint);
    return r.tid;
}

}  // namespace ompdbg::test
