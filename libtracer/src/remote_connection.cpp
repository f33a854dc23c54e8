// One gdbserver agent shared by the processes of its host (remote_process.hpp): opening it
// through a remote shell or TCP, and several processes over one non-stop connection (one
// vCont for all that run, each stop to the process it names, a process stopped as a whole
// as gdb does for all-stop on top of a non-stop target).
#include "ompdbg/tracer/remote_process.hpp"

#include <csignal>

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/tracer/remote_files.hpp"

namespace ompdbg::tracer {

namespace {

std::vector<std::string> words_of(const std::string& command) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < command.size()) {
        while (i < command.size() && command[i] == ' ') {
            ++i;
        }
        std::size_t j = command.find(' ', i);
        if (j == std::string::npos) {
            j = command.size();
        }
        if (j > i) {
            words.push_back(command.substr(i, j - i));
        }
        i = j;
    }
    return words;
}

/// The host a remote-shell command runs on: the word before `gdbserver` ("rsh node1
/// gdbserver --multi -" → node1), for messages.
std::string host_of_command(const std::string& command) {
    auto words = words_of(command);
    for (std::size_t k = 1; k < words.size(); ++k) {
        if (words[k].find("gdbserver") != std::string::npos && words[k - 1][0] != '-') {
            return words[k - 1];
        }
    }
    return {};
}

}  // namespace

std::shared_ptr<remote_connection> remote_connection::open(std::unique_ptr<rsp::transport> link, bool extended,
                                                           int timeout_ms) {
    auto io = std::make_unique<rsp::packet_io>(std::move(link), timeout_ms);
    auto c = std::make_unique<rsp::client>(std::move(io), extended);
    // All-stop gdbserver interrupts by signalling the process group of the last process
    // attached, whatever runs: stopping some processes of a host while others run needs
    // non-stop mode.
    c->set_non_stop();
    return std::shared_ptr<remote_connection>(new remote_connection(std::move(c)));
}

std::shared_ptr<remote_connection> remote_connection::open(const std::string& spec, bool extended, int timeout_ms) {
    std::string s = spec;
    s.erase(0, s.find_first_not_of(' '));
    if (s.empty()) {
        error::send("To open a remote debug connection, you need to specify what\n"
                    "serial device is attached to the remote system\n"
                    "(e.g. /dev/ttyS0, /dev/ttya, COM1, etc.).");
    }
    if (s[0] != '|') {
        return open(rsp::connect_tcp(s), extended, timeout_ms);
    }
    std::string command = s.substr(1);
    command.erase(0, command.find_first_not_of(' '));
    try {
        return open(rsp::spawn_command(command), extended, timeout_ms);
    } catch (const error& e) {
        // The agent never answered: say on which host, why (the remote shell's own last
        // words), and what to do when gdbserver is missing there.
        std::string what = e.what();
        std::string host = host_of_command(command);
        const std::string closed = "Remote connection closed (";
        if (host.empty() || !what.starts_with(closed)) {
            throw;
        }
        auto colon = what.find("): ");
        std::string reason = colon == std::string::npos ? std::string("it closed the connection") : what.substr(colon + 3);
        if (reason.find("gdbserver: command not found") != std::string::npos ||
            reason.find("gdbserver: not found") != std::string::npos) {
            error::send(fmt::format("gdbserver is not installed on host {} ({}): install it there (Debian, Ubuntu: "
                                    "apt-get install gdbserver).",
                                    host, reason));
        }
        error::send(fmt::format("Cannot start the remote agent on host {}: {}", host, reason));
    }
}

std::string remote_connection::describe() const {
    auto& link = const_cast<rsp::client&>(*client_).io().link();
    return fmt::format("{} {}", client_->is_extended() ? "extended-remote" : "remote", link.describe());
}

std::string remote_connection::host() const {
    std::string d = const_cast<rsp::client&>(*client_).io().link().describe();
    if (d.starts_with("|")) {
        return host_of_command(d.substr(1));
    }
    auto colon = d.rfind(':');
    return colon == std::string::npos ? d : d.substr(0, colon);
}

remote_files& remote_connection::files() {
    if (!files_) {
        files_ = std::make_shared<remote_files>();
    }
    return *files_;
}

template <typename F>
auto remote_connection::guarded(F&& f) -> decltype(f()) {
    if (is_lost()) {
        error::send(lost_reason());
    }
    try {
        return f();
    } catch (const error& e) {
        // A reply that never came, a closed stream, garbage: the connection is out of
        // step or gone, and every process it served is lost.
        lost_ = e.what();
        throw;
    }
}

rsp::client& remote_connection::client() {
    if (is_lost()) {
        error::send(lost_reason());
    }
    return *client_;
}

void remote_connection::add_member(pid_t pid) {
    members_.try_emplace(pid);
}

rsp::stop_reply remote_connection::attach(pid_t pid) {
    if (is_lost()) {
        error::send(lost_reason());
    }
    // gdbserver 13 answers every packet after a failed vAttach with that packet's reply
    // (gdb sees the same): never send vAttach for a pid its host does not have.
    if (client_->process_exists(pid) == false) {
        error::send(fmt::format("Cannot attach to process {} on host {}: no such process.", pid,
                                host().empty() ? std::string("of the agent") : host()));
    }
    std::optional<rsp::stop_reply> first;
    try {
        first = client_->attach(pid);
    } catch (const error& e) {
        // An error reply (no such process on that host) loses nothing: say which host.
        std::string what = e.what();
        const std::string generic = "on the remote host";
        auto at = what.find(generic);
        if (at == std::string::npos || host().empty() || is_lost()) {
            throw;
        }
        error::send(what.replace(at, generic.size(), "on host " + host()));
    }
    add_member(pid);
    if (first) {
        return *first;
    }
    // Non-stop: the threads run after vAttach; stop them all (gdb's attach does the same).
    auto& m = members_[pid];
    m.running = true;
    m.whole = true;
    request_stop(pid);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(client_->io().timeout_ms());
    while (std::chrono::steady_clock::now() < deadline) {
        if (auto e = wait_for(pid, 100)) {
            return e->reply;
        }
    }
    error::send(fmt::format("Process {} on host {} did not stop after the attach.", pid, host()));
}

rsp::stop_reply remote_connection::run(const std::vector<std::string>& argv) {
    if (is_lost()) {
        error::send(lost_reason());
    }
    auto stop = client_->run(argv);
    pid_t pid = stop.pid > 0 ? stop.pid : stop.tid;
    if (stop.what != rsp::stop_reply::kind::stopped || pid <= 0) {
        error::send(fmt::format("The program \"{}\" did not start on host {}.", argv.empty() ? "" : argv.front(),
                                host().empty() ? std::string("of the agent") : host()));
    }
    add_member(pid);
    return stop;
}

// A resume goes out at once when every process of the agent runs or has asked to (one
// process: always), so that a resumed process runs without anyone waiting on it; while some
// have not, the next wait sends the one vCont for all that have.
void remote_connection::request_resume(pid_t pid, std::vector<rsp::resume_action> actions) {
    auto& m = members_[pid];
    m.to_send = std::move(actions);
    m.resume_pending = true;
    bool everyone = true;
    for (auto& [p, other] : members_) {
        everyone = everyone && (other.running || other.resume_pending);
    }
    if (everyone) {
        flush_resumes();
    }
}

void remote_connection::flush_resumes() {
    std::vector<rsp::resume_action> all;
    for (auto& [pid, m] : members_) {
        if (m.resume_pending) {
            all.insert(all.end(), m.to_send.begin(), m.to_send.end());
        }
    }
    if (all.empty()) {
        return;
    }
    guarded([&] { client_->resume(all); });
    for (auto& [pid, m] : members_) {
        if (!m.resume_pending) {
            continue;
        }
        m.resume_pending = false;
        m.running = true;
        m.stopping = false;
        m.requested = false;
        m.reason.reset();
        m.other_signals.clear();
        m.stopped.clear();
        m.whole = false;
        m.ran.clear();
        for (auto& a : m.to_send) {
            m.whole = m.whole || a.tid == 0;
            m.ran.insert(a.tid);
        }
        m.to_send.clear();
    }
}

void remote_connection::request_stop(pid_t pid) {
    auto it = members_.find(pid);
    if (it == members_.end()) {
        return;
    }
    auto& m = it->second;
    if (m.resume_pending && !m.running) {
        // It never ran: its stop is at once.
        m.resume_pending = false;
        event e;
        e.reply.pid = pid;
        e.requested = true;
        m.ready.push_back(e);
        return;
    }
    if (!m.running) {
        return;
    }
    m.requested = true;
    if (!m.stopping) {
        guarded([&] { client_->stop(pid); });
        m.stopping = true;
        settle(true);
    }
}

bool remote_connection::is_running(pid_t pid) const {
    auto it = members_.find(pid);
    return it != members_.end() && (it->second.resume_pending || it->second.running || !it->second.ready.empty());
}

void remote_connection::handle(const rsp::stop_reply& r) {
    pid_t owner = r.pid;
    if (owner == 0 && members_.size() == 1) {
        owner = members_.begin()->first;   // an agent without the multiprocess extensions
    }
    auto it = members_.find(owner);
    if (it == members_.end() || !it->second.running) {
        // A process no longer ours (detached, killed), or a thread of a stopped one.
        log::write(log::channel::ptrace, "stop of process {} thread {} not awaited: dropped", r.pid, r.tid);
        return;
    }
    auto& m = it->second;
    if (r.what != rsp::stop_reply::kind::stopped) {
        // The process ended: whatever its threads reported before is moot.
        m.running = false;
        m.ready.push_back(event{r, m.requested, {}});
        return;
    }
    m.stopped.insert(r.tid);
    if (r.signo == 0) {
        return;   // stopped on our vCont;t
    }
    if (!m.reason) {
        m.reason = r;
    } else if (r.is_process_event() && !m.reason->is_process_event()) {
        // A fork or vfork holds its child stopped until the debugger lets it go, an exec
        // changes the image: that is the stop. A breakpoint hit it displaces is hit again
        // (its thread is not stepped over it); a signal stays the thread's.
        if (m.reason->signo != SIGTRAP && m.reason->signo != 0) {
            m.other_signals[m.reason->tid] = m.reason->signo;
        }
        m.reason = r;
    } else if (r.is_process_event()) {
        log::write(log::channel::ptrace, "process {}: a second fork/exec event in one stop (thread {}) is not reported",
                   owner, r.tid);
    } else if (r.signo != SIGTRAP) {
        m.other_signals[r.tid] = r.signo;
    }
    // Another thread's breakpoint hit is not kept: the thread sits on the breakpoint and
    // hits it again when it runs (it is not stepped over, see remote_process::resume).
}

void remote_connection::complete(pid_t pid, member& m) {
    event e;
    if (m.reason) {
        e.reply = *m.reason;
    } else {
        e.reply.pid = pid;
    }
    e.requested = m.requested;
    e.other_signals = std::move(m.other_signals);
    m.running = false;
    m.stopping = false;
    m.reason.reset();
    m.other_signals.clear();
    m.ready.push_back(std::move(e));
}

void remote_connection::settle(bool relist) {
    for (auto& [pid, m] : members_) {
        if (m.running && m.reason && !m.stopping) {
            bool others_run = m.whole;
            for (pid_t t : m.ran) {
                others_run = others_run || !m.stopped.count(t);
            }
            if (!others_run) {
                complete(pid, m);   // one thread stepped alone and reported
                continue;
            }
            guarded([&] { client_->stop(pid); });
            m.stopping = true;
            relist = true;
        }
    }
    bool any_stopping = false;
    for (auto& [pid, m] : members_) {
        any_stopping = any_stopping || (m.running && m.stopping);
    }
    if (!any_stopping || !relist) {
        return;
    }
    auto threads = guarded([&] { return client_->threads(); });
    for (auto& [pid, m] : members_) {
        if (!m.running || !m.stopping) {
            continue;
        }
        bool all = true;
        bool listed = false;
        for (auto& t : threads) {
            bool ran = m.whole || m.ran.count(t.tid);
            listed = listed || t.pid == pid || t.pid == 0;
            if ((t.pid == pid || t.pid == 0) && ran && !m.stopped.count(t.tid)) {
                all = false;
            }
        }
        // A process with no thread left is exiting: its W/X notification is on its way and
        // is its stop (completed as a plain stop now, the exit would be dropped when it came).
        if (all && listed) {
            complete(pid, m);
        }
    }
}

bool remote_connection::pump(int timeout_ms) {
    return guarded([&] {
        auto n = client_->next_notification(timeout_ms);
        if (n) {
            handle(*n);
            // The agent sends no other notification until its queue is drained.
            for (int k = 0; k < 100000; ++k) {
                auto more = client_->next_stopped();
                if (!more) {
                    break;
                }
                handle(*more);
            }
        }
        // Nothing came: a thread that was to report may have exited; list them again.
        settle(true);
        return n.has_value();
    });
}

std::optional<remote_connection::event> remote_connection::wait_for(pid_t pid, int timeout_ms) {
    if (is_lost()) {
        error::send(lost_reason());
    }
    flush_resumes();
    int limit = timeout_ms < 0 ? client_->io().timeout_ms() : timeout_ms;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit);
    for (bool first = true;; first = false) {
        auto it = members_.find(pid);
        if (it == members_.end()) {
            return std::nullopt;
        }
        auto& m = it->second;
        if (!m.ready.empty()) {
            event e = std::move(m.ready.front());
            m.ready.erase(m.ready.begin());
            return e;
        }
        if (!m.running && !m.resume_pending) {
            return std::nullopt;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 && !first) {
            return std::nullopt;
        }
        // While a process is being stopped, its threads are listed again now and then: one
        // that exited never reports.
        int slice = static_cast<int>(std::clamp<long>(left.count(), 0, 100));
        pump(slice);
    }
}

void remote_connection::forget(pid_t pid) {
    members_.erase(pid);
}

}  // namespace ompdbg::tracer
