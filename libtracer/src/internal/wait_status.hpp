#pragma once
// A waitpid status decoded once (rr's WaitStatus): exit, fatal signal, ptrace event stop,
// group-stop, or signal-delivery stop.

#include <sys/types.h>

#include <string>

namespace ompdbg::tracer::internal {

class wait_status {
public:
    enum class kind {
        exited,          ///< WIFEXITED: exit_code()
        fatal_signal,    ///< WIFSIGNALED: signo()
        signal_stop,     ///< signal-delivery stop: signo() (SIGTRAP included)
        group_stop,      ///< PTRACE_EVENT_STOP with a stopping signal (SEIZE group-stop)
        interrupt_stop,  ///< PTRACE_EVENT_STOP with SIGTRAP: PTRACE_INTERRUPT or new-thread stop
        event_stop,      ///< another PTRACE_EVENT_* stop: event()
        syscall_stop,    ///< syscall-enter/exit stop (SIGTRAP|0x80, PTRACE_O_TRACESYSGOOD)
    };

    explicit wait_status(int raw);

    kind type() const { return kind_; }
    int raw() const { return raw_; }
    int exit_code() const;   ///< exited only
    int signo() const;       ///< fatal_signal, signal_stop, group_stop
    int event() const;       ///< PTRACE_EVENT_* of event_stop (0 otherwise)
    bool is_exit() const { return kind_ == kind::exited || kind_ == kind::fatal_signal; }
    std::string describe() const;

private:
    int raw_;
    kind kind_;
};

}  // namespace ompdbg::tracer::internal
