// gdb's names and descriptions of the Linux signals (signal_names.hpp).
#include "ompdbg/debugger/run/signal_names.hpp"

#include <csignal>

#include <fmt/format.h>

namespace ompdbg::debugger {

namespace {

struct signal_text {
    int signo;
    const char* name;
    const char* description;
};

constexpr signal_text signal_table[] = {
    {SIGHUP, "SIGHUP", "Hangup"},
    {SIGINT, "SIGINT", "Interrupt"},
    {SIGQUIT, "SIGQUIT", "Quit"},
    {SIGILL, "SIGILL", "Illegal instruction"},
    {SIGTRAP, "SIGTRAP", "Trace/breakpoint trap"},
    {SIGABRT, "SIGABRT", "Aborted"},
    {SIGBUS, "SIGBUS", "Bus error"},
    {SIGFPE, "SIGFPE", "Arithmetic exception"},
    {SIGKILL, "SIGKILL", "Killed"},
    {SIGUSR1, "SIGUSR1", "User defined signal 1"},
    {SIGSEGV, "SIGSEGV", "Segmentation fault"},
    {SIGUSR2, "SIGUSR2", "User defined signal 2"},
    {SIGPIPE, "SIGPIPE", "Broken pipe"},
    {SIGALRM, "SIGALRM", "Alarm clock"},
    {SIGTERM, "SIGTERM", "Terminated"},
    {SIGCHLD, "SIGCHLD", "Child status changed"},
    {SIGCONT, "SIGCONT", "Continued"},
    {SIGSTOP, "SIGSTOP", "Stopped (signal)"},
    {SIGTSTP, "SIGTSTP", "Stopped (user)"},
    {SIGTTIN, "SIGTTIN", "Stopped (tty input)"},
    {SIGTTOU, "SIGTTOU", "Stopped (tty output)"},
    {SIGURG, "SIGURG", "Urgent I/O condition"},
    {SIGXCPU, "SIGXCPU", "CPU time limit exceeded"},
    {SIGXFSZ, "SIGXFSZ", "File size limit exceeded"},
    {SIGVTALRM, "SIGVTALRM", "Virtual timer expired"},
    {SIGPROF, "SIGPROF", "Profiling timer expired"},
    {SIGWINCH, "SIGWINCH", "Window size changed"},
    {SIGIO, "SIGIO", "I/O possible"},
    {SIGPWR, "SIGPWR", "Power fail/restart"},
    {SIGSYS, "SIGSYS", "Bad system call"},
};

}  // namespace

std::string signal_name(int signo) {
    for (auto& st : signal_table) {
        if (st.signo == signo) {
            return st.name;
        }
    }
    if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
        return fmt::format("SIG{}", signo);
    }
    return fmt::format("SIG{}", signo);
}

std::string signal_description(int signo) {
    for (auto& st : signal_table) {
        if (st.signo == signo) {
            return st.description;
        }
    }
    return fmt::format("Real-time event {}", signo);
}

}  // namespace ompdbg::debugger
