// `ompdbg doctor`: every piece OpenMP and MPI debugging needs, checked one by one, each
// finding with the reason and the fix. The libraries a program uses are taken from the
// target's own link map (/proc/PID/maps for a process, the dynamic loader's --list for a
// program), never from LD_LIBRARY_PATH guesses.
#include "doctor.hpp"
#include "ompdbg/debugger/omp/ompd_tls.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/tracer/proc_fs.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/thread_db.hpp"

extern char** environ;

namespace ompdbg::app {
namespace {

namespace fs = std::filesystem;

/// A /proc file's text; nullopt when it cannot be read (or is empty).
std::optional<std::string> read_text(const std::string& p) {
    std::string text = tracer::proc_fs::read_small_file(p);
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

fs::path cache_dir() {
    if (const char* c = std::getenv("OMPDBG_CACHE"); c != nullptr && *c != '\0') {
        return c;
    }
    const char* home = std::getenv("HOME");
    return fs::path(home != nullptr ? home : "/root") / ".cache" / "ompdbg";
}

bool has_cap_sys_ptrace() {
    auto eff = tracer::proc_fs::status_field(::getpid(), 0, "CapEff");
    if (!eff) {
        return false;
    }
    std::uint64_t caps = 0;
    std::from_chars(eff->data(), eff->data() + eff->size(), caps, 16);
    constexpr int cap_sys_ptrace = 19;
    return (caps >> cap_sys_ptrace) & 1U;
}

/// The libraries the dynamic loader maps for `program`, as `ldd` lists them (the loader's
/// --list mode maps them without running the program). Entries the loader cannot find
/// come back as "NAME => not found" in `not_found`.
std::vector<fs::path> libraries_of_program(const fs::path& program, std::vector<std::string>& not_found,
                                           std::string& why) {
    std::vector<fs::path> libs;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        why = "pipe failed";
        return libs;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::string loader = "/lib64/ld-linux-x86-64.so.2";
    std::string list = "--list";
    std::string prog = program.string();
    char* argv[] = {loader.data(), list.data(), prog.data(), nullptr};
    // The loader must not see LD_PRELOAD/LD_LIBRARY_PATH surprises of ours: it gets the
    // user's environment unchanged, as the program would.
    pid_t child = 0;
    int rc = ::posix_spawn(&child, loader.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        why = fmt::format("cannot run the dynamic loader {}: {}", loader, std::strerror(rc));
        return libs;
    }
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        why = "not a dynamically linked program (the dynamic loader lists no libraries)";
        return libs;
    }
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        // "\tlibomp.so => /path/libomp.so (0x...)", "\t/lib64/ld-linux-x86-64.so.2 (0x...)",
        // "\tlinux-vdso.so.1 (0x...)", "\tlibx.so => not found".
        line.erase(0, line.find_first_not_of(" \t"));
        auto arrow = line.find(" => ");
        std::string path;
        if (arrow != std::string::npos) {
            std::string rest = line.substr(arrow + 4);
            if (rest.rfind("not found", 0) == 0) {
                not_found.push_back(line.substr(0, arrow));
                continue;
            }
            path = rest.substr(0, rest.find(" ("));
        } else {
            path = line.substr(0, line.find(" ("));
        }
        if (!path.empty() && path[0] == '/') {
            libs.emplace_back(path);
        }
    }
    return libs;
}

/// Every file mapped into process `pid` (from /proc/PID/maps), in map order, once each.
std::vector<fs::path> libraries_of_process(pid_t pid) {
    std::vector<fs::path> libs;
    for (const auto& m : tracer::proc_fs::read_maps(pid)) {
        if (m.path.empty() || m.path[0] != '/' || m.path.find(" (deleted)") != std::string::npos) {
            continue;
        }
        fs::path p = m.path;
        if (std::find(libs.begin(), libs.end(), p) == libs.end()) {
            libs.push_back(p);
        }
    }
    return libs;
}

bool basename_starts(const fs::path& p, std::string_view prefix) {
    return p.filename().string().rfind(prefix, 0) == 0;
}

std::shared_ptr<dwarf::elf_file> try_open(const fs::path& p) {
    try {
        return dwarf::elf_file::open(p);
    } catch (const std::exception&) {
        return nullptr;
    }
}

bool defines(const dwarf::elf_file& f, std::string_view symbol) { return !f.find_symbols(symbol).empty(); }

/// What the doctor learnt about the subject while checking, for the later checks.
struct findings {
    std::vector<doctor_check> checks;
    fs::path program;                       ///< the executable (empty for the machine)
    std::shared_ptr<dwarf::elf_file> elf;   ///< the executable, when it opened
    std::vector<fs::path> libraries;
    std::optional<pid_t> pid;
    bool can_attach = false;
    std::optional<fs::path> omp_runtime;
    bool runtime_has_ompd = false;
    bool omp_debug_enabled = false;
    std::shared_ptr<plugins::ompd_library> ompd;

    void add(std::string name, doctor_status st, std::string found, std::string fix = {}) {
        checks.push_back({std::move(name), st, std::move(found), std::move(fix)});
    }
};

// ---- ptrace ------------------------------------------------------------------------

void check_ptrace(findings& f) {
    bool cap = has_cap_sys_ptrace();
    auto scope_text = read_text("/proc/sys/kernel/yama/ptrace_scope");
    int scope = scope_text ? std::atoi(scope_text->c_str()) : -1;
    std::string who = cap ? "ompdbg has CAP_SYS_PTRACE" : "ompdbg has no CAP_SYS_PTRACE";
    std::string scope_desc;
    switch (scope) {
        case -1: scope_desc = "no Yama LSM (classic ptrace rules: same user, or CAP_SYS_PTRACE)"; break;
        case 0: scope_desc = "Yama ptrace_scope 0 (any process of the same user may be attached)"; break;
        case 1: scope_desc = "Yama ptrace_scope 1 (only descendants may be attached without CAP_SYS_PTRACE)"; break;
        case 2: scope_desc = "Yama ptrace_scope 2 (only CAP_SYS_PTRACE may attach)"; break;
        default: scope_desc = fmt::format("Yama ptrace_scope {} (attaching is disabled)", scope); break;
    }
    doctor_status st = doctor_status::ok;
    std::string fix;
    std::string verdict;
    if (scope >= 3) {
        st = doctor_status::missing;
        verdict = "`ompdbg attach` and `ompdbg run` of MPI jobs cannot work";
        fix = "ptrace_scope 3 cannot be lowered until reboot; boot with kernel.yama.ptrace_scope=1 (or 0)";
    } else if ((scope == 1 && !cap) || (scope == 2 && !cap)) {
        st = scope == 2 ? doctor_status::missing : doctor_status::warn;
        verdict = scope == 2 ? "nothing can be debugged" : "`ompdbg run` works; `ompdbg attach` and MPI jobs need more";
        fix = "as root: echo 0 > /proc/sys/kernel/yama/ptrace_scope (or run ompdbg as root / with CAP_SYS_PTRACE)";
    } else {
        verdict = "run and attach allowed";
    }
    f.can_attach = st == doctor_status::ok;
    if (f.pid) {
        auto tracer_id = tracer::proc_fs::tracer_pid(*f.pid);
        if (!tracer_id) {
            f.add("ptrace", doctor_status::missing, fmt::format("no process {}", *f.pid),
                  "give the PID of a running process (ps -e lists them)");
            f.can_attach = false;
            return;
        }
        if (*tracer_id != 0) {
            std::string name;
            if (auto comm = tracer::proc_fs::thread_comm(*tracer_id, *tracer_id); !comm.empty()) {
                name = " (" + comm + ")";
            }
            f.add("ptrace", doctor_status::missing,
                  fmt::format("process {} is already traced by process {}{}", *f.pid, *tracer_id, name),
                  "detach the other debugger or tracer first (a process has one tracer at a time)");
            f.can_attach = false;
            return;
        }
        auto uid_line = tracer::proc_fs::status_field(*f.pid, 0, "Uid");
        unsigned target_uid = uid_line ? static_cast<unsigned>(std::atoi(uid_line->c_str())) : 0;
        if (target_uid != ::geteuid() && !cap) {
            f.add("ptrace", doctor_status::missing,
                  fmt::format("process {} belongs to user {}, ompdbg runs as user {} without CAP_SYS_PTRACE; {}",
                              *f.pid, target_uid, ::geteuid(), scope_desc),
                  "run ompdbg as the process's owner or as root");
            f.can_attach = false;
            return;
        }
        if (scope == 1 && !cap) {
            f.add("ptrace", doctor_status::missing, scope_desc + "; " + who + ": attaching to it is refused",
                  fix);
            f.can_attach = false;
            return;
        }
    }
    f.add("ptrace", st, fmt::format("{}; {}: {}", scope_desc, who, verdict), fix);
}

// ---- the program -------------------------------------------------------------------------

void check_program(findings& f) {
    try {
        f.elf = dwarf::elf_file::open(f.program);
    } catch (const std::exception& e) {
        f.add("program", doctor_status::missing, e.what(), "give an executable ELF file");
        return;
    }
    if (f.elf->debug() != nullptr) {
        auto sep = f.elf->debug_file_path();
        f.add("debug info", doctor_status::ok,
              sep ? fmt::format("{}: DWARF debug information in {}", f.program.string(), sep->string())
                  : fmt::format("{}: DWARF debug information", f.program.string()));
    } else {
        f.add("debug info", doctor_status::warn,
              fmt::format("{}: no debugging symbols found (only the symbol table: no lines, locals or types)",
                          f.program.string()),
              "rebuild with -g (keep -O as it is), or install its separate debug file");
    }
}

void gather_libraries(findings& f) {
    if (f.pid) {
        f.libraries = libraries_of_process(*f.pid);
        return;
    }
    std::vector<std::string> not_found;
    std::string why;
    f.libraries = libraries_of_program(f.program, not_found, why);
    for (const auto& lib : not_found) {
        f.add("libraries", doctor_status::missing,
              fmt::format("{} needs {}, which the dynamic loader does not find", f.program.string(), lib),
              "add its directory to the program's rpath or to LD_LIBRARY_PATH");
    }
}

// ---- OpenMP ------------------------------------------------------------------------------

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
    auto env = read_text(fmt::format("/proc/{}/environ", *f.pid));
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

/// Loads libompd as the debugger would: the bare name "libompd.so" that LLVM's runtime
/// publishes in ompd_dll_locations, resolved by the debugger's own rule
/// (plugins::resolve_ompd_location).
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

/// Attaches, asks libompd for the OpenMP threads of the process, detaches: proves that the
/// whole chain answers a real query.
void check_live_ompd_query(findings& f) {
    if (!f.pid || !f.ompd || !f.omp_debug_enabled || !f.can_attach) {
        return;
    }
    try {
        auto proc = tracer::process::attach(*f.pid);
        std::string answer = ompd_query(f, *proc);
        proc->detach();
        f.add("ompd query", doctor_status::ok, fmt::format("libompd answered for process {}: {}", *f.pid, answer));
    } catch (const std::exception& e) {
        f.add("ompd query", doctor_status::missing, fmt::format("a live OMPD query failed: {}", e.what()),
              "run `ompdbg attach PID` then `omp info` to see the failing step");
    }
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

/// For a program: runs it (stdin, stdout and stderr on /dev/null, OMP_DEBUG=enabled) up to
/// its runtime's ompd_dll_locations_valid, where the runtime has published its OMPD data,
/// asks libompd for its threads there, and again at its first parallel region when one
/// comes within the limit (the runtime is initialised then), and kills it. A program that ends or takes longer than
/// the limit before its runtime starts is a warning, not a failure of OMPD.
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

// ---- DMPL ---------------------------------------------------------------------------------

/// ompdbg's DMPL plugin for a runtime (plugins/dmpl-libomp, plugins/dmpl-libgomp, built next
/// to ompdbg): found, loadable under the plugin policy, its version string.
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

/// The DMPL plugin of the subject's runtime (both on the machine).
void check_dmpl(findings& f, const plugins::plugin_policy& policy) {
    if (!f.omp_runtime) {
        return;
    }
    check_dmpl_plugin(f, policy, basename_starts(*f.omp_runtime, "libgomp.so"));
}

// ---- MPI ---------------------------------------------------------------------------------

/// The first of `libs` and the program that defines `symbol`.
std::optional<fs::path> defining_file(const findings& f, std::string_view symbol) {
    if (f.elf && defines(*f.elf, symbol)) {
        return f.program;
    }
    for (const auto& lib : f.libraries) {
        if (lib == f.program) {
            continue;
        }
        // Only libraries that can be MPI starters' or MPI's: reading every libc symbol
        // table for this is cheap enough, but keep it to the likely ones.
        auto name = lib.filename().string();
        if (name.find("mpi") == std::string::npos && name.find("open-rte") == std::string::npos &&
            name.find("open-pal") == std::string::npos && name.find("prrte") == std::string::npos &&
            name.find("pmix") == std::string::npos && name.find("2dd") == std::string::npos) {
            continue;
        }
        if (auto elf = try_open(lib); elf && defines(*elf, symbol)) {
            return lib;
        }
    }
    return std::nullopt;
}

void check_mpi_starter(findings& f) {
    auto mpir = defining_file(f, "MPIR_Breakpoint");
    auto mpi2dd = defining_file(f, "MPI2DD_info");
    std::optional<fs::path> libmpi;
    for (const auto& lib : f.libraries) {
        if (basename_starts(lib, "libmpi.so")) {
            libmpi = lib;
        }
    }
    if (!mpir && !mpi2dd) {
        if (libmpi) {
            f.add("mpi starter", doctor_status::info,
                  fmt::format("an MPI program (links {}), not a starter: debug the whole job through its starter",
                              libmpi->string()),
                  "ompdbg run -- mpirun -np N PROG ARGS, or ompdbg attach MPIRUN_PID");
        }
        return;
    }
    if (mpi2dd) {
        f.add("mpi starter", doctor_status::ok,
              fmt::format("MPI2DD interface (MPI2DD_info in {}){}", mpi2dd->string(),
                          mpir ? "; MPIR too: ompdbg prefers MPI2DD" : ""));
    }
    if (mpir && !mpi2dd) {
        bool proctable = defining_file(f, "MPIR_proctable").has_value();
        bool being = defining_file(f, "MPIR_being_debugged").has_value();
        if (proctable && being) {
            f.add("mpi starter", doctor_status::ok,
                  fmt::format("MPIR process acquisition (MPIR_Breakpoint, MPIR_proctable, MPIR_being_debugged in {})",
                              mpir->string()));
        } else {
            f.add("mpi starter", doctor_status::missing,
                  fmt::format("MPIR_Breakpoint in {} but not {}", mpir->string(),
                              proctable ? "MPIR_being_debugged" : "MPIR_proctable"),
                  "use an MPI starter that implements the whole MPIR interface (Open MPI's mpirun does)");
        }
    }
}

/// The message-queue DLL of Open MPI and the type information it asks the debugger for.
void check_msgq(findings& f, const plugins::plugin_policy& policy) {
    std::optional<fs::path> libmpi;
    for (const auto& lib : f.libraries) {
        if (basename_starts(lib, "libmpi.so")) {
            libmpi = lib;
        }
    }
    // A starter (mpirun) does not map libmpi; its ranks do. Look next to its libraries.
    if (!libmpi) {
        for (const auto& lib : f.libraries) {
            if (basename_starts(lib, "libopen-rte.so")) {
                for (const auto& e : fs::directory_iterator(lib.parent_path())) {
                    if (basename_starts(e.path(), "libmpi.so.")) {
                        libmpi = e.path();
                        break;
                    }
                }
            }
        }
    }
    if (!libmpi) {
        return;
    }
    // Open MPI installs the DLL in its pkglibdir: <libdir>/openmpi (upstream) or, on
    // Debian, <libdir>/openmpi/lib/openmpi3.
    fs::path dir = libmpi->parent_path();
    fs::path dll = dir / "openmpi" / "libompi_dbg_msgq.so";
    for (const char* sub : {"openmpi", "openmpi/lib/openmpi3", "openmpi3"}) {
        if (fs::path c = dir / sub / "libompi_dbg_msgq.so"; fs::exists(c)) {
            dll = c;
            break;
        }
    }
    if (!fs::exists(dll)) {
        f.add("msgq dll", doctor_status::missing,
              fmt::format("no message-queue DLL ({} does not exist)", dll.string()),
              "install Open MPI's libompi_dbg_msgq.so (it comes with Open MPI's library package)");
    } else if (auto refusal = policy.refusal(dll)) {
        f.add("msgq dll", doctor_status::missing, *refusal, fmt::format("--plugin-path {}", dll.parent_path().string()));
    } else {
        try {
            auto lib = plugins::plugin_library::open(dll, policy);
            if (lib->find("mqs_setup_basic_callbacks") == nullptr || lib->find("mqs_version_compatibility") == nullptr) {
                f.add("msgq dll", doctor_status::missing,
                      fmt::format("{} does not export the message-queue interface (mqs_setup_basic_callbacks)",
                                  dll.string()));
            } else {
                f.add("msgq dll", doctor_status::ok, fmt::format("{} loads and exports the mqs_* interface", dll.string()));
            }
        } catch (const std::exception& e) {
            f.add("msgq dll", doctor_status::missing, e.what());
        }
    }
    // The DLL asks for the layout of Open MPI's internal types; only DWARF has it.
    auto elf = try_open(*libmpi);
    const dwarf::debug_info* dbg = elf ? elf->debug() : nullptr;
    static constexpr const char* needed[] = {"ompi_communicator_t", "ompi_group_t", "ompi_request_t",
                                             "mca_pml_base_request_t", "mca_pml_base_send_request_t",
                                             "mca_pml_base_recv_request_t", "opal_list_t", "ompi_datatype_t"};
    std::string bootstrap_fix =
        fmt::format("use the Open MPI with debug information that scripts/bootstrap builds in {} (its mpicc/mpirun), "
                    "or install Open MPI's debug symbols",
                    (cache_dir() / "openmpi-4.1.4").string());
    if (dbg == nullptr) {
        f.add("msgq types", doctor_status::missing,
              fmt::format("{} has no debug information: the message-queue DLL cannot learn the layout of {}, {}, ... "
                          "(Debian's Open MPI is stripped)",
                          libmpi->string(), needed[0], needed[3]),
              bootstrap_fix);
        return;
    }
    std::vector<std::string> absent;
    for (const char* t : needed) {
        try {
            if (!dbg->find_type(t)) {
                absent.emplace_back(t);
            }
        } catch (const std::exception&) {
            absent.emplace_back(t);
        }
    }
    if (absent.empty()) {
        f.add("msgq types", doctor_status::ok,
              fmt::format("{} has the DWARF types the message-queue DLL asks for", libmpi->string()));
    } else {
        std::string list;
        for (const auto& a : absent) {
            list += (list.empty() ? "" : ", ") + a;
        }
        f.add("msgq types", doctor_status::missing,
              fmt::format("{} has debug information but not the types {}", libmpi->string(), list), bootstrap_fix);
    }
}

// ---- the machine ---------------------------------------------------------------------------

void check_machine(findings& f, const plugins::plugin_policy& policy) {
    fs::path rt = ompd_runtime_hint() / "libomp.so";
    if (auto elf = try_open(rt); elf && defines(*elf, "ompd_dll_locations")) {
        f.add("openmp runtime", doctor_status::ok, fmt::format("OMPD-enabled LLVM OpenMP runtime: {}", rt.string()));
        f.omp_runtime = rt;
        f.runtime_has_ompd = true;
        check_libompd(f, policy);
    } else {
        f.add("openmp runtime", doctor_status::warn,
              fmt::format("no OMPD-enabled LLVM OpenMP runtime in {} (Debian's libomp.so is stripped of the OMPD "
                          "symbols)",
                          rt.parent_path().string()),
              "run scripts/bootstrap, which builds it");
    }
    check_dmpl_plugin(f, policy, false);
    check_dmpl_plugin(f, policy, true);
    fs::path mpi = cache_dir() / "openmpi-4.1.4";
    if (fs::exists(mpi / "bin" / "mpirun")) {
        f.add("open mpi", doctor_status::ok, fmt::format("Open MPI with debug information: {}", mpi.string()));
        f.libraries.push_back(mpi / "lib" / "libopen-rte.so");
        for (const auto& e : fs::directory_iterator(mpi / "lib")) {
            if (basename_starts(e.path(), "libmpi.so")) {
                f.libraries.push_back(e.path());
                break;
            }
        }
        check_msgq(f, policy);
    } else {
        f.add("open mpi", doctor_status::warn,
              fmt::format("no Open MPI with debug information in {}: message queues need it", mpi.string()),
              "run scripts/bootstrap, which builds it");
    }
}

std::string_view status_word(doctor_status s) {
    switch (s) {
        case doctor_status::ok: return "ok";
        case doctor_status::info: return "info";
        case doctor_status::warn: return "warn";
        case doctor_status::missing: return "missing";
    }
    return "?";
}

}  // namespace

std::vector<doctor_check> run_doctor(const doctor_subject& subject, const plugins::plugin_policy& policy) {
    findings f;
    f.pid = subject.pid;
    check_ptrace(f);
    if (!subject.program && !subject.pid) {
        check_machine(f, policy);
        return std::move(f.checks);
    }
    if (subject.pid) {
        std::error_code ec;
        f.program = fs::read_symlink(fmt::format("/proc/{}/exe", *subject.pid), ec);
        if (ec) {
            if (f.checks.empty() || f.checks.back().status != doctor_status::missing) {
                f.add("program", doctor_status::missing,
                      fmt::format("cannot read /proc/{}/exe: {}", *subject.pid, ec.message()));
            }
            return std::move(f.checks);
        }
    } else {
        f.program = *subject.program;
    }
    check_program(f);
    if (!f.elf) {
        return std::move(f.checks);
    }
    gather_libraries(f);
    check_openmp_runtime(f);
    check_omp_debug(f);
    check_libompd(f, policy);
    check_live_ompd_query(f);
    check_program_ompd_query(f);
    check_dmpl(f, policy);
    check_mpi_starter(f);
    check_msgq(f, policy);
    return std::move(f.checks);
}

int doctor_main(const std::vector<std::string>& args, bool json, const plugins::plugin_policy& policy) {
    output out(json);
    if (args.size() > 1) {
        out.error("ompdbg: usage: ompdbg doctor [PROG | PID]");
        return 2;
    }
    doctor_subject subject;
    std::string what = "this machine";
    if (!args.empty()) {
        const std::string& a = args[0];
        pid_t pid = 0;
        auto [p, ec] = std::from_chars(a.data(), a.data() + a.size(), pid);
        if (ec == std::errc() && p == a.data() + a.size() && pid > 0) {
            subject.pid = pid;
            what = fmt::format("process {}", pid);
        } else {
            subject.program = a;
            what = a;
        }
    }
    auto checks = run_doctor(subject, policy);
    bool missing = std::any_of(checks.begin(), checks.end(),
                               [](const doctor_check& c) { return c.status == doctor_status::missing; });
    out.begin_command("doctor");
    nlohmann::json arr = nlohmann::json::array();
    out.line(fmt::format("ompdbg doctor: {}", what));
    for (const auto& c : checks) {
        out.line(fmt::format("  {:<8} {:<15} {}", status_word(c.status), c.name, c.found));
        if (!c.fix.empty() && c.status != doctor_status::ok) {
            out.line(fmt::format("  {:<8} {:<15} fix: {}", "", "", c.fix));
        }
        nlohmann::json j{{"check", c.name}, {"status", status_word(c.status)}, {"found", c.found}};
        if (!c.fix.empty()) {
            j["fix"] = c.fix;
        }
        arr.push_back(std::move(j));
    }
    out.line(missing ? "Some pieces are missing (see fix: lines)." : "Everything needed was found.");
    out.field("subject", what);
    out.field("checks", std::move(arr));
    out.field("complete", !missing);
    out.end_command(true);
    out.flush();
    return missing ? 1 : 0;
}

}  // namespace ompdbg::app
