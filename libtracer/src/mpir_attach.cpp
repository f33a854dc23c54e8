// Attaching to an MPI starter that is still starting its job (mpir.hpp): the table the
// debugger reads is filled only as the tasks' launch answers come back.

#include "ompdbg/tracer/mpir.hpp"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer::mpir {

namespace {

// Often enough that the wait ends soon after the last task answers; seldom enough that
// the starter, stopped for each look, runs nearly all the time.
constexpr std::chrono::milliseconds poll_interval{20};

template <typename T>
T read_scalar_at(target& t, virt_addr a) {
    T v{};
    t.read_memory(a, std::span<std::byte>(reinterpret_cast<std::byte*>(&v), sizeof v));
    return v;
}

std::string name_of(process& starter) {
    return starter.executable().filename().string();
}

// The stops a running starter gives besides our own interrupt: its end is an error, the
// rest are resumed over (its signals stay pending and are delivered on the next resume).
// True when the stop ends the wait (a Ctrl-C).
bool ends_wait(process& starter, const stop_reason& why) {
    switch (why.kind) {
    case stop_kind::exited:
        error::send(fmt::format("{} exited with code {:02o} before starting the MPI job.", name_of(starter),
                                why.exit_code));
    case stop_kind::terminated:
        error::send(fmt::format("{} was killed by signal {} before starting the MPI job.", name_of(starter),
                                ::strsignal(why.signo)));
    case stop_kind::signal:
        if (why.signo == SIGINT) {
            starter.set_pending_signal(why.tid, 0);
            return true;
        }
        return false;
    case stop_kind::interrupted:
        return true;
    default:
        return false;
    }
}

}  // namespace

proctable_progress interface::progress(target& starter) const {
    proctable_progress p;
    try {
        auto size = read_scalar_at<std::int32_t>(starter, proctable_size_);
        auto table = read_scalar_at<std::uint64_t>(starter, proctable_);
        if (size <= 0 || size > 1'000'000 || table == 0) {
            return p;
        }
        p.size = size;
        constexpr std::uint64_t entry_size = 24;   // {char *host_name; char *executable_name; int pid;}
        for (int i = 0; i < size; ++i) {
            if (read_scalar_at<std::int32_t>(starter, virt_addr(table + i * entry_size + 16)) > 0) {
                ++p.with_pid;
            }
        }
    } catch (const std::exception&) {
        return proctable_progress{};   // unreadable: no table yet as far as we can tell
    }
    return p;
}

proctable_progress run_until_proctable_complete(process& starter, const interface& iface,
                                                std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        proctable_progress p = iface.progress(starter);
        if (p.complete() || std::chrono::steady_clock::now() >= deadline) {
            return p;
        }
        starter.resume();
        std::optional<stop_reason> why = starter.wait_for_stop(static_cast<int>(poll_interval.count()));
        if (why) {
            if (ends_wait(starter, *why)) {
                return iface.progress(starter);
            }
            continue;   // resumed over at the top of the loop
        }
        // Still running: stop it to look again. Other stops may come first; the
        // interrupt's own stop follows them.
        starter.interrupt();
        for (;;) {
            stop_reason s = starter.wait_for_stop();
            if (s.kind == stop_kind::interrupted) {
                break;
            }
            if (ends_wait(starter, s)) {
                return iface.progress(starter);
            }
            starter.resume();
        }
    }
}

}  // namespace ompdbg::tracer::mpir
