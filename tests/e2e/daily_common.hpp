#pragma once
// Helpers of the core_*, signals_* and catch_* end-to-end tests: scratch directories and
// core files produced by the test itself.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace ompdbg::test::daily {

/// A fresh directory under the system temp dir, removed with everything in it.
class scratch_dir {
public:
    scratch_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ompdbg-daily-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = tmpl;
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

/// True when the kernel writes cores as plain files named "core" (or "core.PID") in the
/// crashing process' directory; false when core_pattern pipes them to a handler
/// (systemd-coredump, apport) or puts them elsewhere.
inline bool kernel_writes_core_here() {
    std::ifstream in("/proc/sys/kernel/core_pattern");
    std::string pattern;
    std::getline(in, pattern);
    return pattern == "core" || pattern == "core.%p";
}

/// A core of `program ARGS` crashing, in `dir`. With a plain core_pattern the kernel writes
/// it (RLIMIT_CORE raised by `ulimit -c unlimited` in the shell that execs the program);
/// when core_pattern pipes cores to a handler, gdb runs the program to its crash and saves
/// the core with `gcore` instead (gdb records the stop signal in it as the kernel does).
/// Throws std::runtime_error when no core appears.
inline std::filesystem::path make_crash_core(const std::string& program, const std::vector<std::string>& args,
                                             const std::filesystem::path& dir) {
    std::filesystem::path core = dir / "core";
    if (kernel_writes_core_here()) {
        std::vector<std::string> argv{"/bin/sh", "-c", "ulimit -c unlimited && exec \"$0\" \"$@\"", program};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run(argv, run_options().in_dir(dir.string()).timeout_after(60s));
        for (auto& e : std::filesystem::directory_iterator(dir)) {
            auto name = e.path().filename().string();
            if (name == "core" || name.rfind("core.", 0) == 0) {
                return e.path();
            }
        }
        if (r.term_signal == 0 && r.exit_code != -1) {
            throw std::runtime_error("the program did not crash: " + r.all());
        }
    }
    std::vector<std::string> gdb{"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex", "run",
                                 "-ex", "gcore " + core.string(), "--args", program};
    gdb.insert(gdb.end(), args.begin(), args.end());
    auto r = run(gdb, run_options().timeout_after(60s));
    if (!std::filesystem::exists(core)) {
        throw std::runtime_error("no core file: " + r.all());
    }
    return core;
}

/// gdb's transcript without what only gdb prints (libthread_db, BFD's note-size warnings
/// about the kernel's xstate, blank lines).
inline std::vector<std::string> gdb_core_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : cli::debugger_lines(out)) {
        if (l.empty() || l.rfind("warning: Section `.reg-xstate", 0) == 0) {
            continue;
        }
        keep.push_back(l);
    }
    return keep;
}

/// The lines of `out` that start with one of `prefixes` (what a fork test compares with
/// gdb), once the program's own lines matching `program_lines` (each one write(2), which may
/// land inside a debugger line while a detached process runs on) are taken out; process,
/// LWP and thread ids masked.
inline std::vector<std::string> process_event_lines(const std::string& out, const std::vector<std::string>& prefixes,
                                                    const std::regex& program_lines) {
    std::string text = std::regex_replace(out, program_lines, "");
    std::vector<std::string> keep;
    for (auto l : cli::lines_of(text)) {
        bool wanted = false;
        for (const auto& p : prefixes) {
            wanted = wanted || l.rfind(p, 0) == 0;
        }
        if (!wanted) {
            continue;
        }
        // In a table (`info inferiors`) the cell is padded to a fixed width: a pid of fewer
        // digits (pids wrap at pid_max) has more spaces after it.
        l = std::regex_replace(l, std::regex(R"((process|LWP) \d+ {2,})"), "$1 N  ");
        l = std::regex_replace(l, std::regex(R"((process|LWP) \d+)"), "$1 N");
        l = std::regex_replace(l, std::regex(R"(Thread 0x[0-9a-f]+)"), "Thread 0x...");
        keep.push_back(l);
    }
    return keep;
}

inline std::vector<std::string> nonempty_lines(const std::string& out) {
    std::vector<std::string> keep;
    for (auto& l : cli::lines_of(out)) {
        if (!l.empty()) {
            keep.push_back(mask_stack(l));   // as gdb_core_lines (cli::debugger_lines) masks them
        }
    }
    return keep;
}

/// `ompdbg --batch -ex C... core PROGRAM CORE`.
inline run_result ompdbg_core(const std::string& program, const std::string& core,
                              const std::vector<std::string>& cmds) {
    auto args = cli::ex_args(cmds);
    args.insert(args.end(), {"core", program, core});
    return ompdbg_batch(args, run_options().timeout_after(60s));
}

/// `gdb -nx -batch -ex C... PROGRAM CORE`.
inline run_result gdb_core(const std::string& program, const std::string& core, const std::vector<std::string>& cmds) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off"};
    auto ex = cli::ex_args(cmds);
    argv.insert(argv.end(), ex.begin(), ex.end());
    argv.push_back(program);
    argv.push_back(core);
    return run(argv, run_options().timeout_after(60s));
}

}  // namespace ompdbg::test::daily
