#include "process_runner.hpp"

#include "ompdbg_test_paths.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ompdbg::test {
namespace {

using clock = std::chrono::steady_clock;

// After the program itself has exited, how long to keep reading pipes that something it
// left behind (a grandchild in its process group) may still hold open.
constexpr auto exit_grace = 3s;

void close_fd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

void set_nonblocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// A write to a child that closed its stdin must give EPIPE, not kill the test.
void ignore_sigpipe_once() {
    static const bool done = [] {
        std::signal(SIGPIPE, SIG_IGN);
        return true;
    }();
    (void)done;
}

// pidfd_open(2): readable when the child exits, so that exit can be polled together
// with its pipes. -1 on kernels without it (then poll wakes up periodically instead).
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

int poll_timeout_ms(clock::time_point deadline, bool have_pidfd) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    long ms = std::max<long>(0, left.count() + 1);
    if (!have_pidfd) {
        ms = std::min<long>(ms, 20);
    }
    return static_cast<int>(std::min<long>(ms, 60'000));
}

// Reads everything available from a non-blocking fd into `to`; closes it at EOF.
// Returns true when it read something or reached EOF.
bool drain(int& fd, std::string& to) {
    if (fd < 0) {
        return false;
    }
    bool progress = false;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            to.append(buf, static_cast<std::size_t>(n));
            progress = true;
            continue;
        }
        if (n == 0) {
            close_fd(fd);
            return true;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            close_fd(fd);
            return true;
        }
        return progress;
    }
}

struct child {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1;
    std::string exec_error;  // non-empty when exec failed (the child already exited 127)
};

// fork + exec in a new process group, stdio on pipes. Exec failures come back over a
// close-on-exec pipe, as in sdb's launch.
child spawn(const std::vector<std::string>& argv, const run_options& options) {
    ignore_sigpipe_once();
    if (argv.empty()) {
        throw std::invalid_argument("spawn: empty argv");
    }
    // Everything the child needs is prepared before fork: after it only async-signal-safe
    // calls are made.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        std::string key = entry.substr(0, entry.find('='));
        bool replaced = std::any_of(options.env.begin(), options.env.end(),
                                    [&](const auto& kv) { return kv.first == key; });
        if (!replaced) {
            env_strings.push_back(std::move(entry));
        }
    }
    for (const auto& [k, v] : options.env) {
        env_strings.push_back(k + "=" + v);
    }
    std::vector<char*> envp;
    for (auto& s : env_strings) {
        envp.push_back(s.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> argvp;
    for (auto& s : args) {
        argvp.push_back(s.data());
    }
    argvp.push_back(nullptr);
    const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
    const bool has_slash = argv[0].find('/') != std::string::npos;

    int in[2], out[2], err[2], status_pipe[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
        ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(status_pipe, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        // Dispositions set to "ignore" survive exec; the child gets the defaults.
        for (int sig = 1; sig < NSIG; ++sig) {
            ::signal(sig, SIG_DFL);
        }
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (cwd != nullptr && ::chdir(cwd) != 0) {
            int e = errno;
            (void)!::write(status_pipe[1], &e, sizeof e);
            ::_exit(127);
        }
        // A path is executed as it is (a text file must fail with ENOEXEC, not be
        // handed to /bin/sh as execvp does); a bare name is looked up in PATH.
        if (has_slash) {
            ::execve(argvp[0], argvp.data(), envp.data());
        } else {
            ::execvpe(argvp[0], argvp.data(), envp.data());
        }
        int e = errno;
        (void)!::write(status_pipe[1], &e, sizeof e);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so the group exists before we might kill it
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::close(status_pipe[1]);
    child c{pid, in[1], out[0], err[0], {}};
    int e = 0;
    ssize_t n;
    do {
        n = ::read(status_pipe[0], &e, sizeof e);
    } while (n < 0 && errno == EINTR);
    ::close(status_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof e)) {
        c.exec_error = argv[0] + ": " + std::strerror(e);
    }
    set_nonblocking(c.in);
    set_nonblocking(c.out);
    set_nonblocking(c.err);
    return c;
}

void fill_status(run_result& r, int status) {
    if (WIFEXITED(status)) {
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.exit_code = -1;
        r.term_signal = WTERMSIG(status);
    }
}

}  // namespace

run_result run(std::vector<std::string> argv, const run_options& options) {
    child c = spawn(argv, options);
    run_result r;
    if (!c.exec_error.empty()) {
        int status = 0;
        ::waitpid(c.pid, &status, 0);
        close_fd(c.in);
        close_fd(c.out);
        close_fd(c.err);
        r.exit_code = 127;
        r.err = c.exec_error;
        return r;
    }
    const auto deadline = clock::now() + options.timeout;
    auto hard_deadline = deadline;
    int pidfd = open_pidfd(c.pid);
    bool reaped = false;
    int status = 0;
    std::size_t written = 0;
    if (options.stdin_text.empty()) {
        close_fd(c.in);
    }

    auto try_reap = [&](int flags) {
        if (!reaped && ::waitpid(c.pid, &status, flags) == c.pid) {
            reaped = true;
            close_fd(pidfd);
            // What it left behind may hold our pipes open: give it a moment, then the
            // group is killed below.
            hard_deadline = std::min(deadline, clock::now() + exit_grace);
        }
    };

    while (!reaped || c.out >= 0 || c.err >= 0) {
        if (clock::now() >= hard_deadline) {
            if (!reaped) {
                r.timed_out = true;
            }
            break;
        }
        pollfd fds[4];
        nfds_t n = 0;
        if (c.out >= 0) {
            fds[n++] = {c.out, POLLIN, 0};
        }
        if (c.err >= 0) {
            fds[n++] = {c.err, POLLIN, 0};
        }
        if (c.in >= 0) {
            fds[n++] = {c.in, POLLOUT, 0};
        }
        if (pidfd >= 0) {
            fds[n++] = {pidfd, POLLIN, 0};
        }
        int rc = ::poll(fds, n, poll_timeout_ms(hard_deadline, pidfd >= 0 || reaped));
        if (rc < 0 && errno != EINTR) {
            break;
        }
        drain(c.out, r.out);
        drain(c.err, r.err);
        if (c.in >= 0) {
            while (written < options.stdin_text.size()) {
                ssize_t w = ::write(c.in, options.stdin_text.data() + written,
                                    options.stdin_text.size() - written);
                if (w > 0) {
                    written += static_cast<std::size_t>(w);
                } else if (w < 0 && errno == EINTR) {
                    continue;
                } else {
                    if (w < 0 && errno != EAGAIN) {
                        written = options.stdin_text.size();  // EPIPE: it stopped reading
                    }
                    break;
                }
            }
            if (written >= options.stdin_text.size()) {
                close_fd(c.in);
            }
        }
        try_reap(WNOHANG);
    }
    // Timed out, or exited but something of its group still holds the pipes: kill the
    // whole process group, reap, and keep what was read.
    ::kill(-c.pid, SIGKILL);
    if (!reaped) {
        while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    drain(c.out, r.out);
    drain(c.err, r.err);
    close_fd(c.in);
    close_fd(c.out);
    close_fd(c.err);
    close_fd(pidfd);
    fill_status(r, status);
    return r;
}

run_result ompdbg_batch(std::vector<std::string> args, const run_options& options) {
    std::vector<std::string> argv{ompdbg_binary, "--batch"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(std::move(argv), options);
}

run_result gdb_batch(std::vector<std::string> args, const run_options& options) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off",
                                  "-iex", "set breakpoint pending on"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(std::move(argv), options);
}

int example_line(const std::string& source, const std::string& mark) {
    const std::string path = std::string(examples_source_dir) + "/" + source;
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error(path + ": cannot open");
    }
    const std::string tag = "LINE-MARK: " + mark;
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        auto at = text.find(tag);
        if (at == std::string::npos) {
            continue;
        }
        // The mark must end there: "loop" must not match "loop_body".
        auto end = at + tag.size();
        if (end == text.size() || text[end] == ' ' || text[end] == '*') {
            return n;
        }
    }
    throw std::runtime_error(path + ": no LINE-MARK " + mark);
}

std::string example_location(const std::string& source, const std::string& mark) {
    auto slash = source.rfind('/');
    std::string base = slash == std::string::npos ? source : source.substr(slash + 1);
    return base + ":" + std::to_string(example_line(source, mark));
}

std::string example_path(const std::string& name) {
    return std::string(examples_dir) + "/" + name;
}

std::string example_path(const std::string& name, const std::string& compiler, int dwarf,
                         int opt) {
    return std::string(examples_dir) + "/" + name + "-" + compiler + "-dwarf" +
           std::to_string(dwarf) + "-O" + std::to_string(opt);
}

std::vector<std::string> example_variants(const std::string& name, int opt) {
    std::vector<std::string> v;
    for (const char* cc : {"gcc", "clang"}) {
        for (int dw : {4, 5}) {
            v.push_back(example_path(name, cc, dw, opt));
        }
    }
    return v;
}

// ---------------------------------------------------------------------------------------

background_process::background_process(std::vector<std::string> argv, const run_options& options) {
    child c = spawn(argv, options);
    pid_ = c.pid;
    in_fd_ = c.in;
    out_fd_ = c.out;
    err_fd_ = c.err;
    if (!c.exec_error.empty()) {
        kill();
        throw std::runtime_error("cannot start " + c.exec_error);
    }
    if (!options.stdin_text.empty()) {
        write_stdin(options.stdin_text);
    }
}

background_process::~background_process() {
    kill();
}

void background_process::reap(bool block) {
    if (exited_ || pid_ <= 0) {
        return;
    }
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
        exited_ = true;
        status_ = status;
    }
}

bool background_process::pump(clock::time_point deadline) {
    for (;;) {
        std::size_t before = out_.size() + err_.size();
        bool eof_before = out_fd_ < 0;
        pollfd fds[2];
        nfds_t n = 0;
        if (out_fd_ >= 0) {
            fds[n++] = {out_fd_, POLLIN, 0};
        }
        if (err_fd_ >= 0) {
            fds[n++] = {err_fd_, POLLIN, 0};
        }
        if (n == 0) {
            reap(false);
            return false;
        }
        int rc = ::poll(fds, n, poll_timeout_ms(deadline, true));
        if (rc < 0 && errno != EINTR) {
            return false;
        }
        drain(out_fd_, out_);
        drain(err_fd_, err_);
        if (out_.size() + err_.size() != before || (out_fd_ < 0) != eof_before) {
            return true;
        }
        if (clock::now() >= deadline) {
            return false;
        }
    }
}

std::optional<std::string> background_process::next_line(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        auto nl = out_.find('\n');
        if (nl != std::string::npos) {
            std::string line = out_.substr(0, nl);
            out_.erase(0, nl + 1);
            consumed_.push_back(line);
            return line;
        }
        if (out_fd_ < 0) {  // end of output: a last line without '\n' still counts
            if (out_.empty()) {
                return std::nullopt;
            }
            std::string line = std::move(out_);
            out_.clear();
            consumed_.push_back(line);
            return line;
        }
        if (!pump(deadline) && clock::now() >= deadline) {
            return std::nullopt;
        }
    }
}

std::optional<std::string> background_process::wait_for_line(const std::regex& pattern,
                                                              std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
        auto line = next_line(std::max(left, 0ms));
        if (!line) {
            return std::nullopt;
        }
        if (std::regex_search(*line, pattern)) {
            return line;
        }
    }
}

std::optional<std::string> background_process::wait_for_output(const std::regex& pattern,
                                                                std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        if (std::regex_search(out_, pattern)) {
            std::string text = std::move(out_);
            out_.clear();
            return text;
        }
        if (out_fd_ < 0) {
            return std::nullopt;
        }
        if (!pump(deadline) && clock::now() >= deadline) {
            return std::nullopt;
        }
    }
}

void background_process::write_stdin(const std::string& text) {
    if (in_fd_ < 0) {
        throw std::runtime_error("write_stdin: stdin is closed");
    }
    std::size_t written = 0;
    const auto deadline = clock::now() + 10s;
    while (written < text.size()) {
        ssize_t w = ::write(in_fd_, text.data() + written, text.size() - written);
        if (w > 0) {
            written += static_cast<std::size_t>(w);
        } else if (w < 0 && errno == EAGAIN) {
            // The pipe is full: keep reading its output meanwhile so neither side blocks.
            pollfd p{in_fd_, POLLOUT, 0};
            ::poll(&p, 1, 10);
            pump(clock::now());
            if (clock::now() >= deadline) {
                throw std::runtime_error("write_stdin: the program does not read its stdin");
            }
        } else if (!(w < 0 && errno == EINTR)) {
            throw std::runtime_error(std::string("write_stdin: ") + std::strerror(errno));
        }
    }
}

void background_process::close_stdin() {
    close_fd(in_fd_);
}

void background_process::send_signal(int sig) {
    if (running()) {
        ::kill(pid_, sig);
    }
}

std::optional<run_result> background_process::wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    int pidfd = open_pidfd(pid_);
    for (;;) {
        reap(false);
        if (exited_) {
            break;
        }
        if (clock::now() >= deadline) {
            close_fd(pidfd);
            return std::nullopt;
        }
        pollfd fds[3];
        nfds_t n = 0;
        if (out_fd_ >= 0) {
            fds[n++] = {out_fd_, POLLIN, 0};
        }
        if (err_fd_ >= 0) {
            fds[n++] = {err_fd_, POLLIN, 0};
        }
        if (pidfd >= 0) {
            fds[n++] = {pidfd, POLLIN, 0};
        }
        ::poll(fds, n, poll_timeout_ms(deadline, pidfd >= 0));
        drain(out_fd_, out_);
        drain(err_fd_, err_);
    }
    close_fd(pidfd);
    // Collect what is still in the pipes (up to a short grace if a leftover holds them).
    const auto grace = std::min(deadline, clock::now() + exit_grace);
    while ((out_fd_ >= 0 || err_fd_ >= 0) && pump(grace)) {
    }
    run_result r;
    r.out = out_;
    r.err = err_;
    fill_status(r, status_);
    return r;
}

void background_process::kill() {
    if (pid_ > 0 && !exited_) {
        ::kill(-pid_, SIGKILL);
        reap(true);
    }
    close_fd(in_fd_);
    close_fd(out_fd_);
    close_fd(err_fd_);
}

}  // namespace ompdbg::test
