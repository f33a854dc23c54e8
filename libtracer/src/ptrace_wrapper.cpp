#include "internal/ptrace_wrapper.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdbg::tracer::internal {

const char* request_name(int request) {
    switch (request) {
    case PTRACE_TRACEME: return "TRACEME";
    case PTRACE_PEEKTEXT: return "PEEKTEXT";
    case PTRACE_PEEKDATA: return "PEEKDATA";
    case PTRACE_PEEKUSER: return "PEEKUSER";
    case PTRACE_POKETEXT: return "POKETEXT";
    case PTRACE_POKEDATA: return "POKEDATA";
    case PTRACE_POKEUSER: return "POKEUSER";
    case PTRACE_CONT: return "CONT";
    case PTRACE_KILL: return "KILL";
    case PTRACE_SINGLESTEP: return "SINGLESTEP";
    case PTRACE_GETREGS: return "GETREGS";
    case PTRACE_SETREGS: return "SETREGS";
    case PTRACE_GETFPREGS: return "GETFPREGS";
    case PTRACE_SETFPREGS: return "SETFPREGS";
    case PTRACE_ATTACH: return "ATTACH";
    case PTRACE_DETACH: return "DETACH";
    case PTRACE_SETOPTIONS: return "SETOPTIONS";
    case PTRACE_GETEVENTMSG: return "GETEVENTMSG";
    case PTRACE_GETSIGINFO: return "GETSIGINFO";
    case PTRACE_GETREGSET: return "GETREGSET";
    case PTRACE_SETREGSET: return "SETREGSET";
    case PTRACE_SEIZE: return "SEIZE";
    case PTRACE_INTERRUPT: return "INTERRUPT";
    case PTRACE_LISTEN: return "LISTEN";
    default: return "?";
    }
}

namespace {
std::atomic<std::uint64_t> resumes{0};
}  // namespace

std::uint64_t resume_generation() {
    return resumes.load(std::memory_order_acquire);
}

ptrace_result try_ptrace(__ptrace_request request, pid_t tid, void* addr, void* data) {
    switch (request) {
    case PTRACE_CONT: case PTRACE_SYSCALL: case PTRACE_SINGLESTEP: case PTRACE_LISTEN:
    case PTRACE_DETACH: case PTRACE_KILL: case PTRACE_POKETEXT: case PTRACE_POKEDATA:
    case PTRACE_SYSEMU: case PTRACE_SYSEMU_SINGLESTEP: case PTRACE_INTERRUPT:
        resumes.fetch_add(1, std::memory_order_acq_rel);
        break;
    default:
        break;
    }
    errno = 0;
    long r = ::ptrace(request, tid, addr, data);
    ptrace_result res;
    res.value = r;
    // PEEK* return the word read, so -1 is only an error when errno says so.
    if (r == -1 && errno != 0) {
        res.err = errno;
    }
    if (log::enabled(log::channel::ptrace)) {
        if (res.err) {
            log::write(log::channel::ptrace, "ptrace({}, {}, {}, {}) = -1 {}", request_name(request), tid,
                       addr, data, std::strerror(res.err));
        } else {
            log::write(log::channel::ptrace, "ptrace({}, {}, {}, {}) = {:#x}", request_name(request), tid,
                       addr, data, static_cast<unsigned long>(r));
        }
    }
    return res;
}

long ptrace_checked(__ptrace_request request, pid_t tid, void* addr, void* data, const char* what) {
    auto r = try_ptrace(request, tid, addr, data);
    if (!r) {
        error::send_errno(what, r.err);
    }
    return r.value;
}

pid_t wait_tid(pid_t tid, int* status, int options) {
    pid_t r;
    do {
        errno = 0;
        r = ::waitpid(tid, status, options | __WALL);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        int e = errno;
        log::write(log::channel::wait, "waitpid({}) = -1 {}", tid, std::strerror(e));
        return -e;
    }
    if (r > 0) {
        // A thread that was running until now: what was read meanwhile may be stale.
        resumes.fetch_add(1, std::memory_order_acq_rel);
        log::write(log::channel::wait, "waitpid({}) -> {} status {:#x}", tid, r, *status);
    }
    return r;
}

long read_process_memory(pid_t pid, std::uint64_t addr, std::span<std::byte> out) {
    iovec local{out.data(), out.size()};
    iovec remote{reinterpret_cast<void*>(addr), out.size()};
    errno = 0;
    ssize_t r = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (r < 0) {
        int e = errno;
        log::write(log::channel::ptrace, "process_vm_readv({}, {:#x}, {}) = -1 {}", pid, addr, out.size(),
                   std::strerror(e));
        return -e;
    }
    return r;
}

int send_thread_signal(pid_t pid, pid_t tid, int sig) {
    errno = 0;
    long r = ::syscall(SYS_tgkill, pid, tid, sig);
    int e = r < 0 ? errno : 0;
    log::write(log::channel::ptrace, "tgkill({}, {}, {}) = {}", pid, tid, sig, e ? std::strerror(e) : "0");
    return e;
}

std::optional<siginfo_t> get_siginfo(pid_t tid) {
    siginfo_t si{};
    if (!try_ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si)) {
        return std::nullopt;
    }
    return si;
}

std::optional<unsigned long> get_event_msg(pid_t tid) {
    unsigned long msg = 0;
    if (!try_ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg)) {
        return std::nullopt;
    }
    return msg;
}

}  // namespace ompdbg::tracer::internal
