#pragma once
// Driving ompdbg at a real pseudo-terminal, as a user types at it: the test owns the pty's
// master side, ompdbg runs on the slave side as the session leader with a terminal on
// stdin/stdout/stderr. Every wait has a deadline; the destructor kills ompdbg's process
// group (ompdbg's own target included) and reaps it.

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ompdbg_test_paths.hpp"

namespace ompdbg::test {

class pty_session {
public:
    /// Starts `ompdbg ARGS...` on a new pty (80x24, TERM=xterm), with `env` added to the
    /// environment (e.g. HOME of a scratch directory, NO_COLOR).
    pty_session(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env) {
        struct winsize ws {};
        ws.ws_row = 24;
        ws.ws_col = 200;
        pid_ = ::forkpty(&master_, nullptr, nullptr, &ws);
        if (pid_ < 0) {
            throw std::runtime_error("forkpty failed");
        }
        if (pid_ == 0) {
            ::setenv("TERM", "xterm", 1);
            ::unsetenv("NO_COLOR");
            for (const auto& [k, v] : env) {
                ::setenv(k.c_str(), v.c_str(), 1);
            }
            std::vector<std::string> argv{ompdbg_binary};
            argv.insert(argv.end(), args.begin(), args.end());
            std::vector<char*> cargv;
            for (auto& a : argv) {
                cargv.push_back(a.data());
            }
            cargv.push_back(nullptr);
            ::execv(cargv[0], cargv.data());
            ::_exit(127);
        }
        ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
    }
    ~pty_session() {
        if (pid_ > 0) {
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (master_ >= 0) {
            ::close(master_);
        }
    }
    pty_session(const pty_session&) = delete;
    pty_session& operator=(const pty_session&) = delete;

    /// Types `keys` (a command line ends with "\r", as the Enter key sends).
    void type(const std::string& keys) {
        std::size_t done = 0;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (done < keys.size() && std::chrono::steady_clock::now() < deadline) {
            ssize_t n = ::write(master_, keys.data() + done, keys.size() - done);
            if (n > 0) {
                done += static_cast<std::size_t>(n);
            } else {
                pump(std::chrono::milliseconds(10));
            }
        }
    }

    /// Waits until the screen text not consumed yet (escape sequences and carriage
    /// returns removed) matches `pattern`; returns it up to the end of the match and
    /// consumes it. nullopt on timeout or when ompdbg ends first.
    std::optional<std::string> wait_for(const std::regex& pattern,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (true) {
            std::string clean = plain(pending_);
            std::smatch m;
            if (std::regex_search(clean, m, pattern)) {
                std::string upto = clean.substr(0, static_cast<std::size_t>(m.position(0) + m.length(0)));
                consume_plain(upto.size());
                return upto;
            }
            auto now = std::chrono::steady_clock::now();
            if (now >= deadline || !pump(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now))) {
                if (std::chrono::steady_clock::now() >= deadline || eof_) {
                    last_unmatched_ = clean;
                    return std::nullopt;
                }
            }
        }
    }
    /// Waits until the line editor has the terminal in its raw mode (ICANON off, read back
    /// through the master side): keys typed then reach the editor, not the tty's cooked line.
    bool wait_for_line_editing(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            struct termios tio {};
            if (::tcgetattr(master_, &tio) == 0 && (tio.c_lflag & ICANON) == 0) {
                return true;
            }
            pump(std::chrono::milliseconds(10));
        }
        return false;
    }
    /// Every raw byte received so far (escape sequences kept), for colour checks.
    const std::string& raw_all() const { return all_; }
    /// What was on the screen when the last wait_for timed out (for INFO messages).
    const std::string& last_unmatched() const { return last_unmatched_; }

    /// Waits for ompdbg to exit; its exit status, or nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            pid_t r = ::waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            pump(std::chrono::milliseconds(50));
        }
        return std::nullopt;
    }

    /// Terminal text without escape sequences and carriage returns; backspaces applied.
    static std::string plain(const std::string& raw) { return scan(raw, std::string::npos).first; }

private:
    // Plain text of `raw`, and how many raw bytes it took to produce `stop_at` plain
    // characters (the whole of `raw` when it never does).
    static std::pair<std::string, std::size_t> scan(const std::string& raw, std::size_t stop_at) {
        std::string out;
        std::size_t i = 0;
        for (; i < raw.size() && out.size() < stop_at; ++i) {
            char c = raw[i];
            if (c == '\x1b') {
                if (i + 1 < raw.size() && raw[i + 1] == '[') {
                    i += 2;
                    while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) {
                        ++i;
                    }
                } else {
                    ++i;
                }
                continue;
            }
            if (c == '\r' || c == '\a') {
                continue;
            }
            if (c == '\b') {
                if (!out.empty()) {
                    out.pop_back();
                }
                continue;
            }
            out += c;
        }
        return {out, i};
    }

    void consume_plain(std::size_t n) { pending_.erase(0, scan(pending_, n).second); }

    bool pump(std::chrono::milliseconds timeout) {
        struct pollfd p {master_, POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(std::max<long>(1, timeout.count())));
        if (r <= 0) {
            return false;
        }
        char buf[4096];
        ssize_t n = ::read(master_, buf, sizeof buf);
        if (n <= 0) {
            eof_ = true;   // EIO: the slave side is closed (ompdbg exited)
            return false;
        }
        pending_.append(buf, static_cast<std::size_t>(n));
        all_.append(buf, static_cast<std::size_t>(n));
        return true;
    }

    pid_t pid_ = -1;
    int master_ = -1;
    bool eof_ = false;
    std::string pending_;
    std::string all_;
    std::string last_unmatched_;
};

}  // namespace ompdbg::test
