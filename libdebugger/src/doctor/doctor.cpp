// The doctor's checks: every piece OpenMP and MPI debugging needs, checked one by one, each
// finding with the reason and the fix (the front end renders them). The libraries a program uses are taken from the
// target's own link map (/proc/PID/maps for a process, the dynamic loader's --list for a
// program), never from LD_LIBRARY_PATH guesses.
#include "ompdbg/debugger/doctor/doctor.hpp"
#include "doctor/doctor_checks.hpp"
#include "session/plugin_trust_host.hpp"

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

namespace ompdbg::debugger {

namespace doctor_impl {

namespace {

bool has_cap_sys_ptrace() {
    auto eff = tracer::proc_fs::status_field(::getpid(), 0, "CapEff");
    return eff && has_ptrace_capability(*eff);
}

/// The libraries the dynamic loader maps for `program`, as `ldd` lists them (the loader's
/// --list mode maps them without running the program). Entries the loader cannot find
/// come back as "NAME => not found" in `not_found`.
std::vector<fs::path> libraries_of_program(const fs::path& program, std::vector<std::string>& not_found,
                                           std::string& why) {
    std::vector<fs::path> libs;
    // The loader must not see LD_PRELOAD/LD_LIBRARY_PATH surprises of ours: it gets the
    // user's environment unchanged, as the program would.
    auto listed = run_command({"/lib64/ld-linux-x86-64.so.2", "--list", program.string()}, why);
    if (!listed) {
        return libs;
    }
    if (listed->status != 0) {
        why = "not a dynamically linked program (the dynamic loader lists no libraries)";
        return libs;
    }
    std::string text = std::move(listed->out);
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

void check_ptrace(findings& f) {
    bool cap = has_cap_sys_ptrace();
    auto scope_text = read_text("/proc/sys/kernel/yama/ptrace_scope");
    int scope = scope_text ? std::atoi(scope_text->c_str()) : -1;
    std::string who = cap ? "ompdbg has CAP_SYS_PTRACE" : "ompdbg has no CAP_SYS_PTRACE";
    auto rules = judge_ptrace(scope, cap);
    doctor_status st = rules.status;
    const std::string& scope_desc = rules.scope_desc;
    const std::string& fix = rules.fix;
    const std::string& verdict = rules.verdict;
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

}  // namespace

std::optional<command_output> run_command(const std::vector<std::string>& argv, std::string& why) {
    int fds[2];
    if (argv.empty() || ::pipe2(fds, O_CLOEXEC) != 0) {
        why = "pipe failed";
        return std::nullopt;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<std::string> words = argv;
    std::vector<char*> cargv;
    for (auto& w : words) {
        cargv.push_back(w.data());
    }
    cargv.push_back(nullptr);
    pid_t child = 0;
    int rc = ::posix_spawn(&child, words[0].c_str(), &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        why = fmt::format("cannot run {}: {}", argv[0], std::strerror(rc));
        return std::nullopt;
    }
    command_output result;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        result.out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

bool has_ptrace_capability(std::string_view cap_eff_hex) {
    auto start = cap_eff_hex.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
        return false;
    }
    std::uint64_t caps = 0;
    std::from_chars(cap_eff_hex.data() + start, cap_eff_hex.data() + cap_eff_hex.size(), caps, 16);
    constexpr int cap_sys_ptrace = 19;
    return (caps >> cap_sys_ptrace) & 1U;
}

ptrace_rules judge_ptrace(int scope, bool cap) {
    ptrace_rules r;
    switch (scope) {
        case -1: r.scope_desc = "no Yama LSM (classic ptrace rules: same user, or CAP_SYS_PTRACE)"; break;
        case 0: r.scope_desc = "Yama ptrace_scope 0 (any process of the same user may be attached)"; break;
        case 1: r.scope_desc = "Yama ptrace_scope 1 (only descendants may be attached without CAP_SYS_PTRACE)"; break;
        case 2: r.scope_desc = "Yama ptrace_scope 2 (only CAP_SYS_PTRACE may attach)"; break;
        default: r.scope_desc = fmt::format("Yama ptrace_scope {} (attaching is disabled)", scope); break;
    }
    if (scope >= 3) {
        r.status = doctor_status::missing;
        r.verdict = "`ompdbg attach` and `ompdbg run` of MPI jobs cannot work";
        r.fix = "ptrace_scope 3 cannot be lowered until reboot; boot with kernel.yama.ptrace_scope=1 (or 0)";
    } else if ((scope == 1 || scope == 2) && !cap) {
        r.status = scope == 2 ? doctor_status::missing : doctor_status::warn;
        r.verdict = scope == 2 ? "nothing can be debugged" : "`ompdbg run` works; `ompdbg attach` and MPI jobs need more";
        r.fix = "as root: echo 0 > /proc/sys/kernel/yama/ptrace_scope (or run ompdbg as root / with CAP_SYS_PTRACE)";
    } else {
        r.status = doctor_status::ok;
        r.verdict = "run and attach allowed";
    }
    return r;
}

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

}  // namespace doctor_impl

using namespace doctor_impl;

std::vector<doctor_check> run_doctor(const doctor_subject& subject, const plugin_trust_policy& trust) {
    const plugins::plugin_policy& policy = plugin_host_policy(trust);
    findings f;
    f.pid = subject.pid;
    if (subject.host) {
        check_remote_host(f, subject.rsh, *subject.host, policy);
        return std::move(f.checks);
    }
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

}  // namespace ompdbg::debugger
