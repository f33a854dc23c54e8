// `ompdbg doctor`, OpenMP: the runtime the subject maps and its OMPD symbols, OMP_DEBUG,
// libompd (loaded as the debugger would, and asked for the OpenMP threads of a live
// process or of the program run until its first region), and ompdbg's DMPL plugins.

#include "doctor/doctor_checks.hpp"
#include "omp/ompd_tls.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/thread_db.hpp"

extern char** environ;

namespace ompdbg::debugger::doctor_impl {

namespace {

/// Asks libompd, through the whole chain (ptrace, symbols, TLS, callbacks), for the OpenMP
/// threads of the stopped process `proc` and their states: one line for the report.
std::string ompd_query(findings& f, tracer::process& proc) {
    std::unique_ptr<tracer::thread_db> tdb = tracer::thread_db::open(proc);
    plugins::tls_resolver tls = debugger::make_tls_resolver([&tdb] { return tdb.get(); });
    int os_threads = 0, omp_threads = 0;
    std::map<std::string, int> states;
    std::string procs;
    {
        plugins::ompd_address_space as(f.ompd, proc, tls);
        if (auto icv = as.find_icv("num-procs-var")) {
            if (auto n = as.icv(*icv).number) {
                procs = fmt::format(", num-procs-var {}", *n);
            }
        }
        for (auto* t : proc.threads()) {
            ++os_threads;
            if (auto ot = as.thread_of(t->tid())) {
                ++omp_threads;
                ++states[as.state_name(as.state(*ot).first)];
            }
        }
    }
    std::string by_state;
    for (const auto& [name, n] : states) {
        by_state += fmt::format("{}{} {}", by_state.empty() ? "" : ", ", n, name);
    }
    return fmt::format("{} OpenMP threads of {} threads{}", omp_threads, os_threads,
                       by_state.empty() ? "" : " (" + by_state + ")") +
           procs;
}

/// While it lives, this process's stderr goes to /dev/null (a child started meanwhile
/// inherits that).
class stderr_to_null {
public:
    stderr_to_null() : saved_(::dup(STDERR_FILENO)) {
        int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved_ >= 0 && null_fd >= 0) {
            ::dup2(null_fd, STDERR_FILENO);
        }
        if (null_fd >= 0) {
            ::close(null_fd);
        }
    }
    ~stderr_to_null() {
        if (saved_ >= 0) {
            ::dup2(saved_, STDERR_FILENO);
            ::close(saved_);
        }
    }
    stderr_to_null(const stderr_to_null&) = delete;
    stderr_to_null& operator=(const stderr_to_null&) = delete;

private:
    int saved_;
};

/// How long `ompdbg doctor PROG` lets the program run until its runtime publishes OMPD.
constexpr int program_query_limit_ms = 30000;

}  // namespace

fs::path ompd_runtime_hint() { return cache_dir() / "llvm-openmp-19.1.7" / "lib"; }

void check_openmp_runtime(findings& f) {
    for (const auto& lib : f.libraries) {
        if (basename_starts(lib, "libomp.so") || basename_starts(lib, "libiomp5.so") ||
            basename_starts(lib, "libgomp.so")) {
            f.omp_runtime = lib;
            break;
        }
    }
    if (!f.omp_runtime) {
        f.add("openmp runtime", doctor_status::info,
              f.pid ? "no OpenMP runtime is mapped in the process"
                    : "the program links no OpenMP runtime (one loaded with dlopen shows with `ompdbg doctor PID`)");
        return;
    }
    const fs::path& rt = *f.omp_runtime;
    auto elf = try_open(rt);
    if (!elf) {
        f.add("openmp runtime", doctor_status::missing, fmt::format("{}: cannot be read", rt.string()));
        return;
    }
    if (basename_starts(rt, "libgomp.so")) {
        f.add("openmp runtime", doctor_status::warn,
              fmt::format("GNU libgomp ({}): it has no OMPD support", rt.string()),
              "ompdbg answers through its DMPL plugin for libgomp (omp threadprivate, bt folding); for the "
              "full OMPD view build with clang -fopenmp against LLVM's libomp");
        return;
    }
    bool ompd = defines(*elf, "ompd_dll_locations") && defines(*elf, "ompd_bp_parallel_begin");
    if (ompd) {
        f.runtime_has_ompd = true;
        f.add("openmp runtime", doctor_status::ok,
              fmt::format("LLVM OpenMP runtime with OMPD symbols: {}", rt.string()));
        return;
    }
    f.add("openmp runtime", doctor_status::missing,
          fmt::format("{} lacks the OMPD symbols (ompd_dll_locations, ompd_bp_*): it was stripped or built "
                      "without LIBOMP_OMPD_SUPPORT",
                      rt.string()),
          fmt::format("use the OMPD-enabled runtime that scripts/bootstrap builds in {0} (link with -L{0} "
                      "-Wl,-rpath,{0}, or run with LD_LIBRARY_PATH={0})",
                      ompd_runtime_hint().string()));
}

void check_omp_debug(findings& f) {
    if (!f.runtime_has_ompd) {
        return;
    }
    if (!f.pid) {
        const char* mine = std::getenv("OMP_DEBUG");
        if (mine != nullptr && std::string_view(mine) != "enabled") {
            f.add("OMP_DEBUG", doctor_status::warn,
                  fmt::format("OMP_DEBUG={} in this environment: `ompdbg run` keeps it, and the runtime will not "
                              "publish its OMPD data",
                              mine),
                  "unset OMP_DEBUG (ompdbg run then sets OMP_DEBUG=enabled) or set OMP_DEBUG=enabled");
        } else {
            f.add("OMP_DEBUG", doctor_status::ok, "`ompdbg run` starts the program with OMP_DEBUG=enabled");
        }
        return;
    }
    auto env = f.read_target_file ? f.read_target_file(fmt::format("/proc/{}/environ", *f.pid))
                                  : read_text(fmt::format("/proc/{}/environ", *f.pid));
    if (!env) {
        f.add("OMP_DEBUG", doctor_status::warn, fmt::format("cannot read /proc/{}/environ", *f.pid));
        return;
    }
    std::optional<std::string> value;
    std::size_t at = 0;
    while (at < env->size()) {
        std::size_t end = env->find('\0', at);
        if (end == std::string::npos) {
            end = env->size();
        }
        std::string_view kv(env->data() + at, end - at);
        if (kv.rfind("OMP_DEBUG=", 0) == 0) {
            value = std::string(kv.substr(10));
        }
        at = end + 1;
    }
    if (value == "enabled") {
        f.omp_debug_enabled = true;
        f.add("OMP_DEBUG", doctor_status::ok, fmt::format("process {} runs with OMP_DEBUG=enabled", *f.pid));
    } else {
        f.add("OMP_DEBUG", doctor_status::missing,
              value ? fmt::format("process {} runs with OMP_DEBUG={}: the runtime does not publish its OMPD data",
                                  *f.pid, *value)
                    : fmt::format("process {} was started without OMP_DEBUG=enabled: the runtime does not publish "
                                  "its OMPD data",
                                  *f.pid),
              "restart it with OMP_DEBUG=enabled in its environment (or start it with `ompdbg run`, which sets it)");
    }
}

void check_libompd(findings& f, const plugins::plugin_policy& policy) {
    if (!f.runtime_has_ompd) {
        return;
    }
    std::optional<fs::path> found;
    for (const auto& c : plugins::resolve_ompd_location(*f.omp_runtime, "libompd.so")) {
        std::error_code ec;
        if (fs::exists(c, ec)) {
            found = c;
            break;
        }
    }
    if (!found) {
        std::string fix = "install libompd.so next to the runtime";
        for (const char* alt : {"/usr/lib/llvm-19/lib/libompd.so", "/usr/lib/x86_64-linux-gnu/libompd.so"}) {
            if (fs::exists(alt)) {
                fix = fmt::format("pass --ompd-library {} (or `set ompd-library {}`); it must match the runtime's "
                                  "version",
                                  alt, alt);
                break;
            }
        }
        f.add("libompd", doctor_status::missing,
              fmt::format("no libompd.so next to the runtime in {}", f.omp_runtime->parent_path().string()), fix);
        return;
    }
    try {
        f.ompd = plugins::ompd_library::load(*found, policy);
        f.add("libompd", doctor_status::ok,
              fmt::format("{} loads: OMPD API version {}, \"{}\"", f.ompd->path().string(), f.ompd->api_version(),
                          f.ompd->version_string()));
    } catch (const std::exception& e) {
        f.add("libompd", doctor_status::missing, e.what(),
              "use a libompd.so of the same LLVM release as the runtime, from a trusted directory "
              "(--plugin-path DIR allows one)");
    }
}

void check_live_ompd_query(findings& f) {
    if (!f.pid || !f.ompd || !f.omp_debug_enabled || !f.can_attach) {
        return;
    }
    try {
        std::string answer;
        if (f.attached) {
            answer = ompd_query(f, *f.attached);
        } else {
            auto proc = tracer::process::attach(*f.pid);
            answer = ompd_query(f, *proc);
            proc->detach();
        }
        f.add("ompd query", doctor_status::ok, fmt::format("libompd answered for process {}: {}", *f.pid, answer));
    } catch (const std::exception& e) {
        f.add("ompd query", doctor_status::missing, fmt::format("a live OMPD query failed: {}", e.what()),
              "run `ompdbg attach PID` then `omp info` to see the failing step");
    }
}

void check_program_ompd_query(findings& f) {
    if (f.pid || !f.ompd) {
        return;
    }
    const std::string what = f.program.filename().string();
    try {
        tracer::launch_options opts;
        opts.env.push_back("OMP_DEBUG=enabled");
        opts.stdin_path = "/dev/null";
        opts.stdout_path = "/dev/null";
        std::unique_ptr<tracer::process> proc;
        {
            // The runtime says "OMP_OMPD active" on the program's stderr: not ours to show.
            stderr_to_null quiet;
            proc = tracer::process::launch(f.program, {}, opts);
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(program_query_limit_ms);
        std::optional<virt_addr> site, parallel_site;
        std::string answer;
        for (;;) {
            if (!site) {
                auto probe = plugins::probe_openmp_runtime(*proc);
                if (auto it = probe.event_addresses.find("ompd_dll_locations_valid");
                    it != probe.event_addresses.end()) {
                    proc->add_breakpoint_site(it->second);
                    site = it->second;
                }
                if (auto it = probe.event_addresses.find("ompd_bp_parallel_begin"); it != probe.event_addresses.end()) {
                    proc->add_breakpoint_site(it->second);
                    parallel_site = it->second;
                }
            }
            proc->resume();
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                              std::chrono::steady_clock::now());
            auto stop = proc->wait_for_stop(static_cast<int>(std::max<long>(left.count(), 1)));
            if ((!stop || stop->is_process_end()) && !answer.empty()) {
                break;   // OMPD answered at its initialisation; no parallel region came
            }
            if (!stop) {
                proc->kill();
                f.add("ompd query", doctor_status::warn,
                      fmt::format("{} did not start its OpenMP runtime within {} s, so no live query was made", what,
                                  program_query_limit_ms / 1000),
                      fmt::format("run it, then `ompdbg doctor PID` on the running process"));
                return;
            }
            if (stop->is_process_end()) {
                f.add("ompd query", doctor_status::warn,
                      fmt::format("{} ended ({}) before its OpenMP runtime published its OMPD data, so no live "
                                  "query was made",
                                  what,
                                  stop->kind == tracer::stop_kind::exited
                                      ? fmt::format("exit code {}", stop->exit_code)
                                      : fmt::format("signal {}", stop->signo)),
                      "give the program arguments that reach a parallel region, or run `ompdbg doctor PID` on it "
                      "while it runs");
                return;
            }
            if (stop->kind == tracer::stop_kind::breakpoint && site && stop->breakpoint_addr == site) {
                // OMPD is available from here; the runtime has no team yet.
                answer = "at ompd_dll_locations_valid: " + ompd_query(f, *proc);
                if (!parallel_site) {
                    break;
                }
            }
            if (stop->kind == tracer::stop_kind::breakpoint && parallel_site &&
                stop->breakpoint_addr == parallel_site) {
                // The first parallel region begins: the runtime is initialised.
                answer = "at its first parallel region (ompd_bp_parallel_begin): " + ompd_query(f, *proc);
                break;
            }
        }
        pid_t pid = proc->pid();
        if (proc->is_alive()) {
            proc->kill();
        }
        f.add("ompd query", doctor_status::ok,
              fmt::format("ran {} (process {}) with OMP_DEBUG=enabled; libompd answered {}", what, pid, answer));
    } catch (const std::exception& e) {
        f.add("ompd query", doctor_status::missing,
              fmt::format("a live OMPD query on {} failed: {}", what, e.what()),
              "run `ompdbg " + what + "`, `break main`, `run`, then `omp info` to see the failing step");
    }
}

void check_dmpl_plugin(findings& f, const plugins::plugin_policy& policy, bool gnu) {
    fs::path file = fs::path(OMPDBG_DMPL_PLUGIN_DIR) / (gnu ? "libdmpl-libgomp.so" : "libdmpl-libomp.so");
    std::string name = gnu ? "dmpl libgomp" : "dmpl libomp";
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        f.add(name, doctor_status::missing, fmt::format("no DMPL plugin {}", file.string()),
              "build ompdbg's plugins (make, or ninja dmpl-libomp dmpl-libgomp), or pass --dmpl-library PATH");
        return;
    }
    try {
        auto lib = plugins::dmpl_library::load(file, policy);
        f.add(name, doctor_status::ok,
              fmt::format("{} loads: \"{}\", interface compatibility {}, {}", file.string(), lib->version_string(),
                          lib->compatibility(), lib->initialiser()));
    } catch (const std::exception& e) {
        f.add(name, doctor_status::missing, e.what(),
              "rebuild ompdbg's plugins, or pass --dmpl-library PATH (--plugin-path DIR allows its directory)");
    }
}

void check_dmpl(findings& f, const plugins::plugin_policy& policy) {
    if (!f.omp_runtime) {
        return;
    }
    check_dmpl_plugin(f, policy, basename_starts(*f.omp_runtime, "libgomp.so"));
}

}  // namespace ompdbg::debugger::doctor_impl
