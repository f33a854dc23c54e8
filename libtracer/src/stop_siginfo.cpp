// The siginfo of a thread's current ptrace-stop (ptrace_process::stop_siginfo), read when
// asked as gdb's linux-nat reads $_siginfo.

#include "internal/process_impl.hpp"
#include "internal/ptrace_process.hpp"
#include "internal/ptrace_wrapper.hpp"

namespace ompdbg::tracer {

std::optional<siginfo_t> ptrace_process::stop_siginfo(pid_t tid) const {
    const thread_record* t = impl_->find(tid);
    // Only a thread in a ptrace-stop answers; in a group-stop parked with PTRACE_LISTEN the
    // kernel answers EINVAL, which get_siginfo turns into nullopt as well.
    if (t == nullptr || t->st != tstate::stopped || !impl_->alive) {
        return std::nullopt;
    }
    return internal::get_siginfo(tid);
}

}  // namespace ompdbg::tracer
