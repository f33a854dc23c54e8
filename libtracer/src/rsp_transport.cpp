// The two byte streams gdb's remote protocol runs over: a command's stdin/stdout (a remote
// shell running `gdbserver --multi -`) and a TCP socket. The command gets one end of a
// socketpair as both stdin and stdout, so that our writes never raise SIGPIPE
// (MSG_NOSIGNAL) when the agent is gone.
#include "ompdbg/tracer/rsp_transport.hpp"
#include "ompdbg/tracer/rsp_agent_output.hpp"
#include "ompdbg/tracer/rsp_packets.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer::rsp {

namespace {

int g_agent_output = -1;   ///< agent_output_scope's descriptor for agents started now

void write_all(int fd, std::string_view bytes, const std::string& what) {
    while (!bytes.empty()) {
        ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error::send(fmt::format("Remote communication error with {}: {}.", what, std::strerror(errno)));
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

/// One read of what `fd` has, or nullopt at end of stream.
std::optional<std::string> read_some(int fd) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return std::nullopt;
        }
        return std::string(buf, static_cast<std::size_t>(n));
    }
}

class command_transport final : public transport {
public:
    command_transport(std::string command, pid_t child, int stream, int err)
        : command_(std::move(command)), child_(child), stream_(stream), err_(err), output_(g_agent_output) {}

    ~command_transport() override {
        // What the agent wrote while it served us is shown; what it says about the
        // connection ending (gdbserver --multi on stdio: "Remote side has terminated
        // connection", again and again until killed) is not.
        while (err_ >= 0 && drain_stderr()) {
        }
        output_ = -1;
        // gdbserver --multi on stdio never ends by itself when its stdin closes (it waits
        // for another connection that cannot come), so the agent we started is told to
        // exit, as gdb's `monitor exit` does; it detaches what is still attached and kills
        // what it started. Without this every session end waited for the kill below.
        if (answered_) {
            std::string bye = frame("qRcmd," + to_hex("exit"));
            (void)::send(stream_, bye.data(), bye.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        ::shutdown(stream_, SHUT_RDWR);
        ::close(stream_);
        // A remote shell that lingers is killed.
        if (!reaped_ && !reap(2000)) {
            ::kill(-child_, SIGKILL);
            ::kill(child_, SIGKILL);
            reap(-1);
        }
        if (err_ >= 0) {
            ::close(err_);
        }
    }

    void write(std::string_view bytes) override { write_all(stream_, bytes, describe()); }

    std::optional<std::string> read(int timeout_ms) override {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
        for (;;) {
            pollfd fds[2] = {{stream_, POLLIN, 0}, {err_, POLLIN, 0}};
            int wait = -1;
            if (timeout_ms >= 0) {
                auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
                wait = static_cast<int>(std::max<long>(0, left.count()));
            }
            int n = ::poll(fds, err_ >= 0 ? 2 : 1, wait);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return std::string();
            }
            if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
                drain_stderr();
            }
            if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                auto got = read_some(stream_);
                answered_ = answered_ || (got && !got->empty());
                return got;
            }
        }
    }

    void write_byte_async(char c) noexcept override {
        (void)::send(stream_, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }

    std::string describe() const override { return "| " + command_; }

    std::string end_reason() override {
        if (!reaped_) {
            reap(2000);
        }
        while (err_ >= 0 && drain_stderr()) {
        }
        // The last line the remote shell or the agent wrote says why (ssh's "Could not
        // resolve hostname", bash's "gdbserver: command not found"); gdbserver's own
        // chatter about a connection that worked says nothing about its end.
        static constexpr const char* chatter[] = {"Remote debugging using", "Remote debugging from host",
                                                  "Attached; pid", "Detaching from process", "Listening on port",
                                                  "Process "};
        std::string last;
        std::size_t pos = 0;
        while (pos < stderr_.size()) {
            std::size_t nl = stderr_.find('\n', pos);
            std::string line = stderr_.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
            pos = nl == std::string::npos ? stderr_.size() : nl + 1;
            while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
                line.pop_back();
            }
            bool noise = line.empty();
            for (const char* c : chatter) {
                noise = noise || line.starts_with(c);
            }
            if (!noise) {
                last = line;
            }
        }
        std::string status;
        if (reaped_ && WIFEXITED(status_)) {
            status = fmt::format("exit status {}", WEXITSTATUS(status_));
        } else if (reaped_ && WIFSIGNALED(status_)) {
            status = fmt::format("killed by signal {}", WTERMSIG(status_));
        }
        if (last.empty()) {
            return status;
        }
        return status.empty() ? last : fmt::format("{} ({})", last, status);
    }

private:
    /// Reads what the command wrote on stderr (the last 8 KiB are kept); false at its end.
    bool drain_stderr() {
        pollfd p{err_, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) {
            return false;
        }
        auto got = read_some(err_);
        if (!got) {
            ::close(err_);
            err_ = -1;
            return false;
        }
        log::write(log::channel::ptrace, "agent stderr: {}", *got);
        if (output_ >= 0 && answered_) {
            copy_out(*got);
        }
        stderr_ += *got;
        if (stderr_.size() > 8192) {
            stderr_.erase(0, stderr_.size() - 8192);
        }
        return true;
    }

    /// Waits up to `timeout_ms` (< 0: for ever) for the command to end.
    bool reap(int timeout_ms) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            pid_t r = ::waitpid(child_, &status_, timeout_ms < 0 ? 0 : WNOHANG);
            if (r == child_ || (r < 0 && errno == ECHILD)) {
                reaped_ = r == child_;
                return true;
            }
            if (r < 0 && errno != EINTR) {
                return false;
            }
            if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    /// Best effort: the front end's descriptor may be a closed terminal.
    void copy_out(std::string_view bytes) const {
        while (!bytes.empty()) {
            ssize_t n = ::write(output_, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return;
            }
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }

    std::string command_;
    pid_t child_;
    int stream_;
    int err_;
    int output_;              ///< agent_output_scope's descriptor when started; -1: none
    bool answered_ = false;   ///< the agent has sent bytes: its stderr is now worth showing
    std::string stderr_;
    bool reaped_ = false;
    int status_ = 0;
};

class tcp_transport final : public transport {
public:
    tcp_transport(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
    ~tcp_transport() override { ::close(fd_); }

    void write(std::string_view bytes) override { write_all(fd_, bytes, name_); }
    std::optional<std::string> read(int timeout_ms) override {
        pollfd p{fd_, POLLIN, 0};
        int n;
        do {
            n = ::poll(&p, 1, timeout_ms);
        } while (n < 0 && errno == EINTR);
        if (n <= 0) {
            return std::string();
        }
        return read_some(fd_);
    }
    void write_byte_async(char c) noexcept override { (void)::send(fd_, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT); }
    std::string describe() const override { return name_; }

private:
    std::string name_;
    int fd_;
};

}  // namespace

agent_output_scope::agent_output_scope(int fd) : previous_(g_agent_output) { g_agent_output = fd; }

agent_output_scope::~agent_output_scope() { g_agent_output = previous_; }

std::unique_ptr<transport> spawn_command(const std::string& command) {
    int sv[2];
    int errp[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        error::send_errno("socketpair");
    }
    if (::pipe2(errp, O_CLOEXEC) != 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        error::send_errno("pipe");
    }
    pid_t child = ::fork();
    if (child < 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        ::close(errp[0]);
        ::close(errp[1]);
        error::send_errno("fork");
    }
    if (child == 0) {
        // Its own process group: a Ctrl-C at our terminal interrupts the target through
        // the protocol, never the remote shell.
        ::setpgid(0, 0);
        ::dup2(sv[1], 0);
        ::dup2(sv[1], 1);
        ::dup2(errp[1], 2);
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGINT, SIG_DFL);
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(sv[1]);
    ::close(errp[1]);
    log::write(log::channel::ptrace, "started `{}` as process {}", command, child);
    return std::make_unique<command_transport>(command, child, sv[0], errp[0]);
}

std::unique_ptr<transport> connect_tcp(const std::string& host_port) {
    auto colon = host_port.rfind(':');
    if (colon == std::string::npos) {
        error::send(fmt::format("{}: no port given (HOST:PORT).", host_port));
    }
    std::string host = host_port.substr(0, colon);
    std::string port = host_port.substr(colon + 1);
    if (host.empty()) {
        host = "localhost";
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
        error::send(fmt::format("{}: {}.", host_port, ::gai_strerror(rc)));
    }
    int err = ECONNREFUSED;
    for (auto* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ::freeaddrinfo(res);
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return std::make_unique<tcp_transport>(host_port, fd);
        }
        err = errno;
        ::close(fd);
    }
    ::freeaddrinfo(res);
    std::string why = std::strerror(err);
    error::send(fmt::format("{}: {}.", host_port, why));
}

}  // namespace ompdbg::tracer::rsp
