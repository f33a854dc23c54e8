#include "line_editor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <editline/readline.h>

#include "completion.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::app {

namespace {

constexpr int history_size = 1000;

// Ctrl-C at the idle prompt: gdb prints "Quit" and prompts again, the line dropped.
volatile std::sig_atomic_t idle_interrupt = 0;

extern "C" void on_idle_sigint(int) { idle_interrupt = 1; }

// The signal mask the editor's key reader waits with: SIGINT stays blocked while the
// editor runs (refreshing, handling keys) and is let in only inside ppoll(2). A Ctrl-C
// typed while the editor is busy with earlier keys is then seen by the next wait instead
// of setting the flag just before a read(2) that would block on it forever.
sigset_t wait_mask;

// The descriptor keys are read from: the terminal opened again without blocking (its own
// open file description, so stdin's flags, shared with the programs we start, stay as they
// are). A Ctrl-C flushes the terminal's input: a read after ppoll said "readable" may find
// nothing, and a blocking read would then wait, with SIGINT blocked, for the next key.
int key_fd() {
    static int fd = [] {
        int k = ::open("/proc/self/fd/0", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        return k >= 0 ? k : STDIN_FILENO;
    }();
    return fd;
}

// The editor's key reader: waits for a key with SIGINT unblocked, atomically; a Ctrl-C
// (on_idle_sigint) ends readline() with EOF.
int read_key(FILE*) {
    const int fd = key_fd();
    for (;;) {
        if (idle_interrupt) {
            return EOF;
        }
        struct pollfd in {fd, POLLIN, 0};
        int r = ::ppoll(&in, 1, nullptr, &wait_mask);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return EOF;
        }
        int ready = 0;
        if (fd == STDIN_FILENO && ::ioctl(fd, FIONREAD, &ready) == 0 && ready == 0 && !(in.revents & POLLHUP)) {
            continue;   // flushed meanwhile (no private descriptor: the narrower guard)
        }
        unsigned char c = 0;
        ssize_t n = ::read(fd, &c, 1);
        if (n == 1) {
            return c;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue;
        }
        return EOF;
    }
}

// The editor calls plain C functions; the one live editor's session is reached here.
session* completing_session = nullptr;
completion current;
std::size_t next_candidate = 0;

char* candidate_generator(const char*, int state) {
    if (state == 0) {
        next_candidate = 0;
    }
    if (next_candidate >= current.candidates.size()) {
        return nullptr;
    }
    return ::strdup(current.candidates[next_candidate++].c_str());
}

char** attempt_completion(const char* text, int start, int end) {
    (void)start;
    ::rl_attempted_completion_over = 1;
    if (completing_session == nullptr) {
        return nullptr;
    }
    std::string line(::rl_line_buffer, static_cast<std::size_t>(std::max(end, 0)));
    current = complete_line(*completing_session, line);
    if (current.kind == completion_kind::file) {
        ::rl_attempted_completion_over = 0;
        return ::rl_completion_matches(text, ::rl_filename_completion_function);
    }
    if (current.candidates.empty()) {
        return nullptr;
    }
    return ::rl_completion_matches(text, candidate_generator);
}

}  // namespace

std::filesystem::path history_file_path() {
    if (const char* f = std::getenv("OMPDBG_HISTFILE"); f != nullptr && *f != '\0') {
        return f;
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        return std::filesystem::path(home) / ".ompdbg_history";
    }
    return {};
}

line_editor::line_editor(session& s) : session_(s), history_(history_file_path()) {
    ::rl_readline_name = "ompdbg";
    ::rl_basic_word_break_characters = completion_word_breaks;
    ::rl_attempted_completion_function = attempt_completion;
    ::rl_getc_function = read_key;
    ::rl_catch_signals = 0;   // SIGINT is ours (on_idle_sigint), not re-raised by the editor
    completing_session = &session_;
    ::using_history();
    ::stifle_history(history_size);
    if (!history_.empty()) {
        // A missing file is the first session, not an error.
        ::read_history(history_.c_str());
    }
}

line_editor::~line_editor() {
    completing_session = nullptr;
    if (!history_.empty() && ::write_history(history_.c_str()) != 0) {
        log::write(log::channel::cli, "cannot write history file {}", history_.string());
    }
}

std::optional<std::string> line_editor::next_line(std::string_view prompt) {
    std::string p(prompt);
    std::fflush(stdout);
    char* raw = nullptr;
    for (;;) {
        // SIGINT is blocked around readline() and delivered inside read_key's ppoll. The
        // mask is restored while on_idle_sigint is still the handler: a Ctrl-C typed just
        // after Enter only sets the flag, which is ignored once a line was read.
        struct sigaction quit {}, saved {};
        quit.sa_handler = on_idle_sigint;
        sigemptyset(&quit.sa_mask);
        idle_interrupt = 0;
        sigset_t block, saved_mask;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        ::sigaction(SIGINT, &quit, &saved);
        ::sigprocmask(SIG_BLOCK, &block, &saved_mask);
        wait_mask = saved_mask;
        sigdelset(&wait_mask, SIGINT);
        raw = ::readline(p.c_str());
        ::sigprocmask(SIG_SETMASK, &saved_mask, nullptr);
        ::sigaction(SIGINT, &saved, nullptr);
        if (raw != nullptr || idle_interrupt == 0) {
            break;
        }
        std::fputs("Quit\n", stdout);
        std::fflush(stdout);
    }
    if (raw == nullptr) {
        std::fputs("quit\n", stdout);
        std::fflush(stdout);
        return std::nullopt;
    }
    std::string line(raw);
    std::free(raw);
    bool blank = line.find_first_not_of(" \t") == std::string::npos;
    if (!blank && line != last_added_) {
        ::add_history(line.c_str());
        last_added_ = line;
    }
    return line;
}

}  // namespace ompdbg::app
