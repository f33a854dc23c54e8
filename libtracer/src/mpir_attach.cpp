// Attaching to an MPI starter that is still starting its job (mpir.hpp): the table the
// debugger reads is filled only as the tasks' launch answers come back, and a task whose
// pid is there may not have executed its program yet.

#include "ompdbg/tracer/mpir.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/tracer/proc_fs.hpp"

namespace ompdbg::tracer::mpir {

namespace {

// Often enough that the wait ends soon after the last task answers; seldom enough that
// the starter, stopped for each look, runs nearly all the time.
constexpr std::chrono::milliseconds poll_interval{20};

std::string name_of(process& starter) {
    return starter.executable().filename().string();
}

// The stops of a process run until something happens (a starter until its table is
// complete, a task until its exec), besides our own interrupt: its end is an error naming
// `who` and what it did not get to (`before`); the rest are resumed over (signals stay
// pending and are delivered on the next resume). True when the stop ends the wait (a
// Ctrl-C, the interrupt).
bool ends_wait(process& p, const stop_reason& why, const std::string& who, const std::string& before) {
    switch (why.kind) {
    case stop_kind::exited:
        error::send(fmt::format("{} exited with code {:02o} before {}.", who, why.exit_code, before));
    case stop_kind::terminated:
        error::send(fmt::format("{} was killed by signal {} before {}.", who, ::strsignal(why.signo), before));
    case stop_kind::signal:
        if (why.signo == SIGINT) {
            p.set_pending_signal(why.tid, 0);
            return true;
        }
        return false;
    case stop_kind::interrupted:
        return true;
    default:
        return false;
    }
}

bool ends_wait(process& starter, const stop_reason& why) {
    return ends_wait(starter, why, name_of(starter), "starting the MPI job");
}

bool ends_task_wait(process& task, const std::filesystem::path& executable, const stop_reason& why) {
    return ends_wait(task, why, fmt::format("process {}", task.pid()), "executing " + executable.string());
}

}  // namespace

bool forked_not_executed(pid_t pid, const std::filesystem::path& executable) {
    auto exe = proc_fs::process_exe(pid);
    auto ppid = proc_fs::status_field(pid, 0, "PPid");
    if (exe.empty() || !ppid) {
        return false;
    }
    std::error_code ec;
    if (std::filesystem::equivalent(exe, executable, ec) && !ec) {
        return false;
    }
    return exe == proc_fs::process_exe(static_cast<pid_t>(std::atoi(ppid->c_str())));
}

bool run_until_task_executed(process& task, const std::filesystem::path& executable,
                             std::chrono::milliseconds limit) {
    if (!forked_not_executed(task.pid(), executable)) {
        return true;
    }
    log::write(log::channel::ptrace, "task {} has not executed {} yet: running it to its exec", task.pid(),
               executable.string());
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return false;
        }
        task.resume();
        // At most a day at a time: the wait takes an int of milliseconds.
        auto wait = std::min<std::chrono::milliseconds>(left, std::chrono::hours(24));
        std::optional<stop_reason> why = task.wait_for_stop(static_cast<int>(wait.count()));
        if (why) {
            if (why->kind == stop_kind::exec) {
                return true;
            }
            if (ends_task_wait(task, executable, *why)) {
                return false;
            }
            continue;   // resumed over at the top of the loop
        }
        // Still not executed when the time is up: stop it again. Any stop will do (its
        // exec may come before the interrupt's): see run_until_proctable_complete.
        task.interrupt();
        stop_reason s = task.wait_for_stop();
        if (s.kind == stop_kind::exec) {
            return true;
        }
        if (s.kind != stop_kind::interrupted) {
            ends_task_wait(task, executable, s);   // throws when it ended
        }
        return false;
    }
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
        // Still running: stop it to look again. Any stop will do: another (a signal) may
        // come before the interrupt's own, and the starter is stopped then too. Resuming
        // over it to wait for the interrupt's stop would wait for ever: resume() spends an
        // interrupt asked before (the hang of the srun attach test under load).
        starter.interrupt();
        stop_reason s = starter.wait_for_stop();
        if (s.kind != stop_kind::interrupted && ends_wait(starter, s)) {
            return iface.progress(starter);
        }
    }
}

}  // namespace ompdbg::tracer::mpir
