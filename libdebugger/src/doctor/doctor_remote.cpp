// `ompdbg doctor --host HOST [PID]`: what debugging a process of another host needs, checked
// there through the agent ompdbg would use (gdbserver started by the remote shell): the agent
// itself, the protocol features ompdbg relies on, ptrace on that host as the agent meets it,
// and for a process its OpenMP runtime and the libompd this machine would load for it. Files
// of the host are read through the agent (vFile), never here: a pid of that host means
// nothing in this machine's /proc.
#include "doctor/doctor_checks.hpp"

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/remote_files.hpp"
#include "ompdbg/tracer/remote_process.hpp"

namespace ompdbg::debugger {

std::vector<std::string> missing_agent_features(const tracer::rsp::features& have) {
    const std::pair<const char*, bool> needed[] = {
        {"multiprocess+", have.multiprocess},
        {"QNonStop+", have.non_stop},
        {"vContSupported+", have.vcont},
        {"qXfer:features:read+", have.xfer_features},
        {"qXfer:threads:read+", have.xfer_threads},
        {"qXfer:libraries-svr4:read+", have.xfer_libraries_svr4},
        {"qXfer:auxv:read+", have.xfer_auxv},
        {"qXfer:exec-file:read+", have.xfer_exec_file},
    };
    std::vector<std::string> missing;
    for (const auto& [name, present] : needed) {
        if (!present) {
            missing.emplace_back(name);
        }
    }
    return missing;
}

namespace doctor_impl {

namespace {

/// The value of `field` ("Uid", "TracerPid", "CapEff") in the text of a /proc/PID/status.
std::optional<std::string> status_value(const std::string& status, std::string_view field) {
    std::istringstream in(status);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':') {
            auto v = line.substr(field.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    }
    return std::nullopt;
}

/// The host's file `path`, read by the agent in its own mount namespace; nullopt (with the
/// agent's reason in `why`) when it cannot.
std::optional<std::string> host_file(tracer::remote_connection& conn, const std::string& path,
                                     std::string* why = nullptr) {
    try {
        return tracer::read_host_file(conn.client(), 0, path);
    } catch (const std::exception& e) {
        if (why) {
            *why = e.what();
        }
        return std::nullopt;
    }
}

/// The first line `gdbserver --version` prints on `host` ("GNU gdbserver (Debian 13.1-3)
/// 13.1"); empty when the remote shell cannot run it.
std::string agent_version(const std::string& rsh, const std::string& host) {
    std::string why;
    auto r = run_command({"/bin/sh", "-c", rsh + " \"$@\"", "sh", host, "gdbserver --version"}, why);
    if (!r || r->status != 0) {
        return {};
    }
    return r->out.substr(0, r->out.find('\n'));
}

/// Starts the agent as a job's ranks would; nullptr (and a finding) when it does not start.
std::shared_ptr<tracer::remote_connection> check_agent(findings& f, const std::string& rsh, const std::string& host) {
    std::string spec = fmt::format("| {} {} gdbserver --multi -", rsh, host);
    std::shared_ptr<tracer::remote_connection> conn;
    try {
        conn = tracer::remote_connection::open(spec, true);
    } catch (const std::exception& e) {
        f.add("agent", doctor_status::missing, e.what(),
              fmt::format("install gdbserver on {} (Debian, Ubuntu: apt-get install gdbserver) and make `{} {} "
                          "true` work without a password (--rsh CMD or OMPDBG_RSH name the remote shell)",
                          host, rsh, host));
        return nullptr;
    }
    std::string version = agent_version(rsh, host);
    f.add("agent", doctor_status::ok,
          fmt::format("{} on host {}, started by `{} {} gdbserver --multi -`",
                      version.empty() ? std::string("gdbserver (version unknown)") : version, host, rsh, host));
    auto missing = missing_agent_features(conn->client().supported());
    if (missing.empty()) {
        f.add("agent features", doctor_status::ok,
              fmt::format("multiprocess, non-stop, vCont, target description, threads, libraries-svr4, auxv, "
                          "exec-file; PacketSize {}",
                          conn->client().supported().packet_size));
    } else {
        std::string names;
        for (auto& m : missing) {
            names += (names.empty() ? "" : ", ") + m;
        }
        f.add("agent features", doctor_status::missing,
              fmt::format("the gdbserver of host {} does not announce {} in its qSupported reply", host, names),
              "install the gdbserver of a current gdb (12 or later) on that host");
    }
    return conn;
}

/// ptrace on the host, as the agent meets it: Yama's ptrace_scope there, the agent's own
/// user and CAP_SYS_PTRACE (its /proc/self/status), and for a pid whether it exists there,
/// is traced already or belongs to another user.
void check_remote_ptrace(findings& f, tracer::remote_connection& conn, const std::string& host) {
    auto scope_text = host_file(conn, "/proc/sys/kernel/yama/ptrace_scope");
    int scope = scope_text ? std::atoi(scope_text->c_str()) : -1;
    auto self = host_file(conn, "/proc/self/status").value_or("");
    auto cap_eff = status_value(self, "CapEff");
    bool cap = cap_eff && has_ptrace_capability(*cap_eff);
    auto uid_text = status_value(self, "Uid");
    unsigned agent_uid = uid_text ? static_cast<unsigned>(std::atoi(uid_text->c_str())) : 0;
    auto rules = judge_ptrace(scope, cap);
    std::string who = fmt::format("gdbserver runs as user {} {} CAP_SYS_PTRACE", agent_uid, cap ? "with" : "without");
    f.can_attach = rules.status == doctor_status::ok;
    if (f.pid) {
        std::string why;
        auto status = host_file(conn, fmt::format("/proc/{}/status", *f.pid), &why);
        if (!status) {
            f.add("ptrace", doctor_status::missing, fmt::format("no process {} on host {}", *f.pid, host),
                  fmt::format("give the pid the process has on {} (`ps -e` there lists them)", host));
            f.can_attach = false;
            return;
        }
        auto tracer_pid = status_value(*status, "TracerPid");
        if (tracer_pid && std::atoi(tracer_pid->c_str()) != 0) {
            f.add("ptrace", doctor_status::missing,
                  fmt::format("process {} on host {} is already traced by process {} there", *f.pid, host, *tracer_pid),
                  "detach the other debugger or tracer first (a process has one tracer at a time)");
            f.can_attach = false;
            return;
        }
        auto owner = status_value(*status, "Uid");
        unsigned target_uid = owner ? static_cast<unsigned>(std::atoi(owner->c_str())) : 0;
        if (target_uid != agent_uid && !cap) {
            f.add("ptrace", doctor_status::missing,
                  fmt::format("process {} on host {} belongs to user {}; {}", *f.pid, host, target_uid, who),
                  "reach the host as the process's owner (the remote shell's user) or as root");
            f.can_attach = false;
            return;
        }
    }
    f.add("ptrace", rules.status, fmt::format("on host {}: {}; {}: {}", host, rules.scope_desc, who, rules.verdict),
          rules.fix);
}

/// For a pid of the host: attaches it through the agent, and runs the program and OpenMP
/// checks on what the process maps (each file as ompdbg reads it: the same file here, or the
/// host's fetched through the agent), then detaches.
void check_remote_process(findings& f, std::shared_ptr<tracer::remote_connection> conn, const std::string& host,
                          const plugins::plugin_policy& policy) {
    std::unique_ptr<tracer::remote_process> proc;
    try {
        proc = tracer::remote_process::attach(conn, *f.pid);
    } catch (const std::exception& e) {
        f.add("program", doctor_status::missing, e.what());
        return;
    }
    for (const auto& m : proc->modules()) {
        fs::path here = m.elf ? m.elf->path() : m.path;
        if (m.is_executable) {
            f.program = here;
        }
        if (!here.empty() && std::find(f.libraries.begin(), f.libraries.end(), here) == f.libraries.end()) {
            f.libraries.push_back(here);
        }
    }
    f.add("program", doctor_status::ok,
          fmt::format("process {} on host {} runs {}", *f.pid, host, proc->executable().string()));
    f.read_target_file = [&conn](const std::string& path) { return host_file(*conn, path); };
    f.attached = proc.get();
    if (!f.program.empty()) {
        check_program(f);
    }
    check_openmp_runtime(f);
    check_omp_debug(f);
    check_libompd(f, policy);
    check_live_ompd_query(f);
    f.attached = nullptr;
    f.read_target_file = nullptr;
    try {
        proc->detach();
    } catch (const std::exception& e) {
        f.add("detach", doctor_status::warn, e.what());
    }
}

}  // namespace

void check_remote_host(findings& f, const std::string& rsh, const std::string& host,
                       const plugins::plugin_policy& policy) {
    auto conn = check_agent(f, rsh, host);
    if (!conn) {
        return;
    }
    check_remote_ptrace(f, *conn, host);
    if (f.pid && f.can_attach) {
        check_remote_process(f, conn, host, policy);
    }
}

}  // namespace doctor_impl

}  // namespace ompdbg::debugger
