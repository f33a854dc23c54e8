#include "internal/wait_status.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <csignal>

#include <fmt/format.h>

namespace ompdbg::tracer::internal {

namespace {
bool is_stopping_signal(int sig) {
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}
}  // namespace

wait_status::wait_status(int raw) : raw_(raw) {
    if (WIFEXITED(raw)) {
        kind_ = kind::exited;
    } else if (WIFSIGNALED(raw)) {
        kind_ = kind::fatal_signal;
    } else {
        int ev = raw >> 16;
        if (ev == PTRACE_EVENT_STOP) {
            // With PTRACE_SEIZE, both group-stops and PTRACE_INTERRUPT traps are reported as
            // PTRACE_EVENT_STOP; the stop signal tells them apart (man ptrace: the interrupt
            // trap and the new-thread auto-attach stop carry SIGTRAP).
            kind_ = is_stopping_signal(WSTOPSIG(raw)) ? kind::group_stop : kind::interrupt_stop;
        } else if (ev != 0) {
            kind_ = kind::event_stop;
        } else if (WSTOPSIG(raw) == (SIGTRAP | 0x80)) {
            kind_ = kind::syscall_stop;
        } else {
            kind_ = kind::signal_stop;
        }
    }
}

int wait_status::exit_code() const { return kind_ == kind::exited ? WEXITSTATUS(raw_) : -1; }

int wait_status::signo() const {
    switch (kind_) {
    case kind::fatal_signal: return WTERMSIG(raw_);
    case kind::exited: return 0;
    default: return WSTOPSIG(raw_) & 0x7f;
    }
}

int wait_status::event() const { return kind_ == kind::event_stop ? (raw_ >> 16) : 0; }

std::string wait_status::describe() const {
    switch (kind_) {
    case kind::exited: return fmt::format("exited {}", exit_code());
    case kind::fatal_signal: return fmt::format("killed by signal {}", signo());
    case kind::signal_stop: return fmt::format("signal-delivery stop {}", signo());
    case kind::group_stop: return fmt::format("group-stop {}", signo());
    case kind::interrupt_stop: return "interrupt stop";
    case kind::event_stop: return fmt::format("ptrace event {}", event());
    case kind::syscall_stop: return "syscall stop";
    }
    return "?";
}

}  // namespace ompdbg::tracer::internal
