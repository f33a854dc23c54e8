// One gdbserver agent shared by the processes of its host (remote_process.hpp): opening it
// through a remote shell or TCP, and the all-stop multiplexing of several processes over
// one connection (one vCont for all that run, each stop reply to the process it names).
#include "ompdbg/tracer/remote_process.hpp"

#include <csignal>

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

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
    return std::shared_ptr<remote_connection>(new remote_connection(std::make_unique<rsp::client>(std::move(io), extended)));
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

rsp::client& remote_connection::client() {
    if (!lost_.empty()) {
        error::send(lost_);
    }
    if (running_) {
        // A packet about a stopped process while others of this agent run: all-stop
        // agents read nothing but 0x03 then. Halt them; they run again at the next wait.
        halting_ = true;
        if (!interrupt_sent_.exchange(true)) {
            ++sigints_sent_;
            client_->interrupt();
        }
        auto start = std::chrono::steady_clock::now();
        while (running_) {
            auto spent = std::chrono::steady_clock::now() - start;
            if (spent > std::chrono::milliseconds(client_->io().timeout_ms())) {
                error::send(fmt::format("The remote agent on host {} did not stop its processes within {} s.", host(),
                                        client_->io().timeout_ms() / 1000));
            }
            receive_one(100);
        }
    }
    return *client_;
}

void remote_connection::add_member(pid_t pid) {
    members_.insert(pid);
}

// A resume goes out at once when every process of the agent has asked for one (one process:
// always), so that a resumed process runs without anyone waiting on it; while some have not,
// the next wait sends the one vCont for all that have (all-stop: one vCont while running).
void remote_connection::request_resume(pid_t pid, std::vector<rsp::resume_action> actions) {
    queued_.erase(pid);
    wanted_[pid] = std::move(actions);
    bool everyone = !running_ && !members_.empty();
    for (pid_t m : members_) {
        everyone = everyone && wanted_.count(m) > 0;
    }
    if (everyone) {
        send_resume();
    }
}

bool remote_connection::is_running(pid_t pid) const {
    return wanted_.count(pid) > 0 || (queued_.count(pid) > 0 && !queued_.at(pid).empty());
}

void remote_connection::send_resume() {
    std::vector<rsp::resume_action> all;
    for (auto& [pid, actions] : wanted_) {
        all.insert(all.end(), actions.begin(), actions.end());
    }
    client_->resume(all);
    interrupt_sent_ = false;
    running_ = true;
}

bool remote_connection::receive_one(int timeout_ms) {
    std::optional<rsp::stop_reply> r;
    try {
        r = client_->wait_stop(timeout_ms);
    } catch (const error& e) {
        // The agent or its connection is gone: every process it served is lost.
        lost_ = e.what();
        running_ = false;
        halting_ = false;
        throw;
    }
    if (!r) {
        return false;
    }
    running_ = false;
    pid_t owner = r->pid;
    if (owner == 0 && wanted_.size() == 1) {
        owner = wanted_.begin()->first;
    }
    bool halted_for_packet = std::exchange(halting_, false) && !stop_requested_;
    bool is_stop = r->what == rsp::stop_reply::kind::stopped;
    bool our_sigint = is_stop && r->signo == SIGINT && sigints_sent_ > 0;
    if (our_sigint) {
        --sigints_sent_;
    }
    if (halted_for_packet && is_stop && (r->signo == SIGINT || r->signo == SIGSTOP || r->signo == 0)) {
        // Our own halt: the process stays among those to run at the next wait.
        return true;
    }
    if (our_sigint && !stop_requested_ && wanted_.count(owner)) {
        // gdbserver interrupts with kill(-pgrp, SIGINT); when another event won the race
        // to the reply, that SIGINT stays pending and shows up later, unasked. It was ours:
        // never the program's, never the user's stop. The process runs on at the next wait.
        return true;
    }
    wanted_.erase(owner);
    queued_[owner].push_back(event{*r, stop_requested_.load()});
    if (wanted_.empty()) {
        stop_requested_ = false;
    }
    return true;
}

std::optional<remote_connection::event> remote_connection::wait_for(pid_t pid, int timeout_ms) {
    if (!lost_.empty()) {
        error::send(lost_);
    }
    auto take_queued = [&]() -> std::optional<event> {
        auto q = queued_.find(pid);
        if (q == queued_.end() || q->second.empty()) {
            return std::nullopt;
        }
        event e = q->second.front();
        q->second.erase(q->second.begin());
        return e;
    };
    // Two rounds at most: send what is to run and read one reply; if that reply was
    // another process's, it is queued for it and this wait ends (so that the caller
    // handles that stop, and usually stops everything, before anything of this agent runs
    // again), unless a stop was asked for: then the agent has stopped this process too.
    for (int round = 0; round < 2; ++round) {
        if (auto e = take_queued()) {
            return e;
        }
        if (!wanted_.count(pid)) {
            return std::nullopt;
        }
        if (!running_) {
            if (stop_requested_) {
                // The agent stopped every process when another one reported the stop asked for.
                wanted_.erase(pid);
                if (wanted_.empty()) {
                    stop_requested_ = false;
                }
                event e;
                e.reply.pid = pid;
                e.requested = true;
                return e;
            }
            if (round > 0) {
                return std::nullopt;
            }
            send_resume();
        }
        if (!receive_one(timeout_ms < 0 ? client_->io().timeout_ms() : timeout_ms)) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

void remote_connection::interrupt() noexcept {
    stop_requested_ = true;
    if (running_ && !interrupt_sent_.exchange(true)) {
        ++sigints_sent_;
        client_->interrupt();
    }
}

void remote_connection::forget(pid_t pid) {
    wanted_.erase(pid);
    queued_.erase(pid);
    members_.erase(pid);
}

}  // namespace ompdbg::tracer
