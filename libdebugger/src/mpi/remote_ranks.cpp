// Ranks on other hosts (remote_ranks.hpp): host locality, the remote shell, and the
// concurrent start of one gdbserver agent per host.
#include "ompdbg/debugger/mpi/remote_ranks.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/remote_files.hpp"
#include "ompdbg/tracer/remote_process.hpp"

namespace ompdbg::debugger {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string first_label(const std::string& name) {
    return name.substr(0, name.find('.'));
}

/// This machine's names: its host name and FQDN (resolved once; the resolver reads
/// /etc/hosts first, and a failure leaves just the host name).
const std::vector<std::string>& own_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n{"localhost", "localhost.localdomain", "127.0.0.1", "::1"};
        char buf[256] = {};
        if (::gethostname(buf, sizeof buf - 1) == 0 && buf[0]) {
            n.push_back(lower(buf));
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_flags = AI_CANONNAME;
            addrinfo* res = nullptr;
            if (::getaddrinfo(buf, nullptr, &hints, &res) == 0) {
                if (res && res->ai_canonname) {
                    n.push_back(lower(res->ai_canonname));
                }
                ::freeaddrinfo(res);
            }
        }
        return n;
    }();
    return names;
}

/// One host's ranks attached through its agent (run on a thread of its own).
struct host_attach {
    std::vector<std::unique_ptr<tracer::process>> procs;   ///< index as in `rows`, null when failed
    std::vector<std::string> errors;                       ///< index as in `rows`, empty when attached
    std::string agent_error;                               ///< the agent did not start
    std::shared_ptr<tracer::remote_connection> conn;       ///< the host's agent, null when it did not start
};

host_attach attach_on_host(const std::string& spec, const std::string& host, const std::vector<pid_t>& pids,
                           const tracer::elf_provider& elves) {
    host_attach out;
    out.procs.resize(pids.size());
    out.errors.resize(pids.size());
    std::shared_ptr<tracer::remote_connection> conn;
    try {
        conn = tracer::remote_connection::open(spec, true);
    } catch (const std::exception& e) {
        out.agent_error = e.what();
        return out;
    }
    out.conn = conn;
    for (std::size_t i = 0; i < pids.size(); ++i) {
        try {
            // Asked first, so that the one line says what a table's stale pid is.
            if (conn->client().process_exists(pids[i]) == false) {
                out.errors[i] = no_such_process(pids[i], host);
                continue;
            }
            out.procs[i] = tracer::remote_process::attach(conn, pids[i], elves);
        } catch (const std::exception& e) {
            out.errors[i] = e.what();
        }
    }
    return out;
}

}  // namespace

std::string remote_shell(session& s) {
    if (!s.settings().remote_shell.empty()) {
        return s.settings().remote_shell;
    }
    return remote_shell_of_environment();
}

std::string remote_shell_of_environment() {
    if (const char* env = std::getenv("OMPDBG_RSH"); env && *env) {
        return env;
    }
    return default_remote_shell;
}

std::vector<std::string> host_list(std::string_view text) {
    std::vector<std::string> names;
    std::size_t i = 0;
    while (i <= text.size()) {
        std::size_t j = std::min(text.find(',', i), text.size());
        auto name = text.substr(i, j - i);
        auto b = name.find_first_not_of(" \t");
        auto e = name.find_last_not_of(" \t");
        if (b != std::string_view::npos) {
            names.emplace_back(name.substr(b, e - b + 1));
        }
        i = j + 1;
    }
    return names;
}

std::vector<std::string> local_hosts_of_environment() {
    const char* env = std::getenv("OMPDBG_MPI_LOCAL_HOSTS");
    return env ? host_list(env) : std::vector<std::string>{};
}

bool is_local_host(const std::string& host, const std::vector<std::string>& aliases) {
    std::string h = lower(host);
    if (h.empty()) {
        return true;   // a starter that names no host runs its ranks here
    }
    for (auto& a : aliases) {
        if (lower(a) == h) {
            return true;
        }
    }
    for (auto& n : own_names()) {
        // "node1" and "node1.cluster" name one machine; two different domains do not.
        bool same = n == h || ((n.find('.') == std::string::npos || h.find('.') == std::string::npos) &&
                               first_label(n) == first_label(h) && !std::isdigit(static_cast<unsigned char>(h[0])));
        if (same) {
            return true;
        }
    }
    return false;
}

bool has_remote_ranks(session& s) {
    return std::any_of(s.inferiors().begin(), s.inferiors().end(), [&](auto& inf) {
        return !inf->host.empty() && !is_local_host(inf->host, s.settings().local_hosts);
    });
}

std::string reached_through(const inferior& inf) {
    if (!inf.process || !inf.process->is_alive()) {
        return {};
    }
    if (std::string host = inf.process->agent_host(); !host.empty()) {
        return "gdbserver via " + host;
    }
    return "ptrace";
}

void announce_remote_files(session& s, tracer::remote_connection& conn) {
    // Before the transfer (a file the build-id cache holds is read without one, and
    // without the notice).
    conn.files().set_notice([&s, host = conn.host()](const std::filesystem::path& host_path) {
        s.observer().remote_file_fetch(host, host_path);
    });
}

std::string no_such_process(pid_t pid, const std::string& host) {
    return fmt::format("process {} does not exist on host {}", pid, host);
}

std::vector<std::string> attach_remote_ranks(session& s, const std::vector<remote_rank>& rows,
                                             std::vector<std::string>& errors) {
    std::vector<std::string> reasons(rows.size());
    std::map<std::string, std::vector<std::size_t>> by_host;   // host → indexes of its rows
    for (std::size_t i = 0; i < rows.size(); ++i) {
        by_host[rows[i].host].push_back(i);
    }
    // One agent per host, every host at once: the time is the slowest host's, not the sum.
    std::string rsh = remote_shell(s);
    auto elves = s.elf_provider();
    std::vector<std::pair<std::string, std::future<host_attach>>> pending;
    for (auto& [host, index] : by_host) {
        std::vector<pid_t> pids;
        for (auto i : index) {
            pids.push_back(rows[i].pid);
        }
        std::string spec = fmt::format("| {} {} gdbserver --multi -", rsh, host);
        pending.emplace_back(host, std::async(std::launch::async, attach_on_host, spec, host, pids, elves));
    }
    for (auto& [host, fut] : pending) {
        auto got = fut.get();
        auto& index = by_host[host];
        if (!got.agent_error.empty()) {
            std::vector<int> ranks;
            for (auto i : index) {
                ranks.push_back(rows[i].inf->rank);
                rows[i].inf->lost = got.agent_error;
            }
            errors.push_back(fmt::format("Cannot reach rank {} on host {}: {}", format_rank_list(ranks), host,
                                         got.agent_error));
            continue;
        }
        for (std::size_t k = 0; k < index.size(); ++k) {
            auto& row = rows[index[k]];
            if (got.procs[k]) {
                announce_remote_files(s, *got.conn);   // the host's agent, which attached it
                row.inf->process = std::move(got.procs[k]);
            } else {
                row.inf->lost = got.errors[k];
                reasons[index[k]] = got.errors[k];
            }
        }
    }
    return reasons;
}

std::vector<std::unique_ptr<inferior>> attach_job_ranks(session& s, const std::vector<tracer::mpir::proc_desc>& table,
                                                        std::vector<std::string>& errors) {
    std::vector<std::unique_ptr<inferior>> list;
    std::vector<remote_rank> remote;
    // As long as `set mpi-spawn-timeout` (unlimited: a year; Ctrl-C ends the wait).
    auto limit = s.settings().mpi_spawn_timeout;
    std::chrono::milliseconds spawn_wait = limit ? std::chrono::seconds(*limit) : std::chrono::hours(24 * 365);
    auto fail = [&](inferior& inf, const std::string& why) {
        inf.lost = why;
        errors.push_back(fmt::format("Cannot attach to rank {} (pid {} on {}): {}", inf.rank, inf.pid, inf.host, why));
    };
    for (const auto& d : table) {
        auto inf = std::make_unique<inferior>();
        inf->rank = d.rank;
        inf->host = d.host_name;
        inf->executable = std::filesystem::path(d.executable_name).lexically_normal();
        inf->pid = d.pid;
        if (!is_local_host(d.host_name, s.settings().local_hosts)) {
            remote.push_back({d.host_name, d.pid, inf.get()});
        } else if (std::error_code ec; d.pid <= 0 || !std::filesystem::exists(fmt::format("/proc/{}", d.pid), ec)) {
            fail(*inf, no_such_process(d.pid, d.host_name.empty() ? "localhost" : d.host_name));
        } else {
            try {
                inf->process = tracer::process::attach(d.pid, s.elf_provider());
                // srun publishes a task's pid once slurmstepd has forked it: attached at
                // once, it may still be slurmstepd, its execve to come. Run it there first.
                if (!tracer::mpir::run_until_task_executed(*inf->process, inf->executable, spawn_wait)) {
                    inf->process.reset();   // detached: it goes on as if we had not come
                    fail(*inf, fmt::format("it has not executed {} within {} s", inf->executable.string(),
                                           spawn_wait.count() / 1000));
                    list.push_back(std::move(inf));
                    continue;
                }
                // srun's tasks wait in a SIGSTOP for the debugger, which must continue them
                // (slurmstepd wakes only the untraced ones); they stay held under ptrace.
                inf->process->end_job_control_stop();
            } catch (const std::exception& e) {
                fail(*inf, e.what());
            }
        }
        list.push_back(std::move(inf));
    }
    auto reasons = attach_remote_ranks(s, remote, errors);
    for (std::size_t i = 0; i < remote.size(); ++i) {
        if (!reasons[i].empty()) {
            fail(*remote[i].inf, reasons[i]);
        }
    }
    return list;
}

}  // namespace ompdbg::debugger
