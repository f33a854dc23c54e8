// Creating and releasing a traced process: launch (clone + PTRACE_SEIZE + execve, errors
// back over a close-on-exec pipe as in sdb), attach (PTRACE_SEIZE every task until no new
// one appears), detach, kill and the RAII destructor.

#include "internal/child_spawn.hpp"
#include "internal/process_impl.hpp"
#include "internal/proc_fs.hpp"
#include "internal/ptrace_wrapper.hpp"
#include "internal/wakeup.hpp"

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ompdbg::tracer {

using internal::try_ptrace;
using internal::wait_status;

namespace {

// Forks are traced only to take our int3s out of the child before letting it go.
constexpr long attach_options_mask = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK |
                                     PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACESYSGOOD;
// A launched process dies with us; an attached one must survive us: no EXITKILL.
constexpr long launch_options_mask = attach_options_mask | PTRACE_O_EXITKILL;
// PTRACE_O_TRACEEXIT is deliberately off: it costs one more stop for every thread exit,
// and waitpid already reports each traced thread's exit status.

// A pipe whose ends close themselves.
struct pipe_pair {
    int fd[2] = {-1, -1};
    pipe_pair() {
        if (::pipe2(fd, O_CLOEXEC) != 0) {
            error::send_errno("pipe");
        }
    }
    ~pipe_pair() {
        close_read();
        close_write();
    }
    void close_read() {
        if (fd[0] >= 0) {
            ::close(fd[0]);
            fd[0] = -1;
        }
    }
    void close_write() {
        if (fd[1] >= 0) {
            ::close(fd[1]);
            fd[1] = -1;
        }
    }
};

// gdb runs `PROG` from the current directory, else looks it up in PATH.
std::string resolve_program(const std::filesystem::path& p) {
    std::string s = p.string();
    if (s.find('/') != std::string::npos || ::access(s.c_str(), F_OK) == 0) {
        return s;
    }
    if (const char* path = std::getenv("PATH")) {
        std::string all(path);
        std::size_t b = 0;
        while (b <= all.size()) {
            std::size_t e = all.find(':', b);
            if (e == std::string::npos) {
                e = all.size();
            }
            std::string dir = all.substr(b, e - b);
            std::string cand = (dir.empty() ? "." : dir) + "/" + s;
            if (::access(cand.c_str(), X_OK) == 0) {
                return cand;
            }
            b = e + 1;
        }
    }
    return s;
}

}  // namespace

ptrace_process::ptrace_process() : impl_(std::make_unique<impl>()) {}

ptrace_process::~ptrace_process() {
    try {
        if (impl_ && impl_->alive) {
            if (impl_->attached) {
                detach();
            } else {
                kill();
            }
        }
    } catch (...) {
        // A destructor never throws; the process is gone or beyond reach.
    }
}

std::unique_ptr<process> process::launch(const std::filesystem::path& path, const std::vector<std::string>& args,
                                         const launch_options& opts) {
    internal::wakeup_init();
    std::string prog = resolve_program(path);

    // Everything the child needs is built before fork (the child may not allocate).
    std::vector<std::string> argv_s{path.string()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; e && *e; ++e) {
        std::string entry(*e);
        std::string name = entry.substr(0, entry.find('='));
        bool overridden = std::any_of(opts.env.begin(), opts.env.end(), [&](const std::string& o) {
            return o.substr(0, o.find('=')) == name;
        });
        if (!overridden) {
            env_s.push_back(std::move(entry));
        }
    }
    env_s.insert(env_s.end(), opts.env.begin(), opts.env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::string in_s = opts.stdin_path ? opts.stdin_path->string() : "";
    std::string out_s = opts.stdout_path ? opts.stdout_path->string() : "";
    std::string err_s = opts.stderr_path ? opts.stderr_path->string() : "";
    std::string cwd_s = opts.working_dir ? opts.working_dir->string() : "";

    pipe_pair go, err;
    internal::child_plan plan;
    plan.go_fd = go.fd[0];
    plan.err_fd = err.fd[1];
    plan.close_fds[0] = go.fd[1];
    plan.close_fds[1] = err.fd[0];
    plan.path = prog.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.stdin_path = opts.stdin_path ? in_s.c_str() : nullptr;
    plan.stdout_path = opts.stdout_path ? out_s.c_str() : nullptr;
    plan.stdout_append = opts.stdout_append;
    plan.stdout_fd = opts.stdout_fd;
    plan.stderr_path = opts.stderr_path ? err_s.c_str() : nullptr;
    plan.stderr_append = opts.stderr_append;
    plan.stderr_to_stdout = opts.stderr_to_stdout;
    plan.cwd = opts.working_dir ? cwd_s.c_str() : nullptr;
    plan.no_aslr = opts.disable_aslr;
    // The child keeps the debugger's process group and terminal: Ctrl-C reaches both, and
    // the app turns it into process::interrupt(). Declared after what the child reads, so
    // that its stack is released first; every way out of this function has waited for the
    // child's exec or its end.
    internal::child_stack child_stack;
    pid_t child = internal::spawn_child(plan, child_stack);
    if (child < 0) {
        error::send_errno("clone");
    }
    go.close_read();
    err.close_write();

    std::unique_ptr<ptrace_process> proc(new ptrace_process());
    auto& d = *proc->impl_;
    d.pid = child;
    d.attached = false;
    d.elves = opts.elves;

    // Seize before the child may exec, so that the exec and everything after is traced with
    // SEIZE semantics (PTRACE_INTERRUPT, PTRACE_LISTEN, EVENT_STOP for new threads).
    auto seized = try_ptrace(PTRACE_SEIZE, child, nullptr, reinterpret_cast<void*>(launch_options_mask));
    if (!seized) {
        ::kill(child, SIGKILL);
        int st;
        internal::wait_tid(child, &st, 0);
        d.alive = false;
        error::send_errno("ptrace", seized.err);
    }
    d.add_thread(child, tstate::running);
    char c = 1;
    [[maybe_unused]] auto w = ::write(go.fd[1], &c, 1);
    go.close_write();

    int msg[2] = {0, 0};
    ssize_t n;
    do {
        n = ::read(err.fd[0], msg, sizeof msg);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        // The child failed before or at execve and exits with 127: reap it.
        int st = 0;
        for (;;) {
            pid_t r = internal::wait_tid(child, &st, 0);
            if (r != child || WIFEXITED(st) || WIFSIGNALED(st)) {
                break;
            }
            try_ptrace(PTRACE_CONT, child, nullptr, nullptr);
        }
        d.alive = false;
        d.threads.clear();
        const char* what = msg[0] == 1   ? in_s.c_str()
                           : msg[0] == 2 ? out_s.c_str()
                           : msg[0] == 3 ? cwd_s.c_str()
                           : msg[0] == 4 ? err_s.c_str()
                                         : path.c_str();
        error::send(std::string(what) + ": " + std::strerror(msg[1]));
    }

    // Wait for the exec stop (PTRACE_EVENT_EXEC); signals that arrive before it are passed on.
    for (;;) {
        int st = 0;
        pid_t r = internal::wait_tid(child, &st, 0);
        if (r != child) {
            d.alive = false;
            d.threads.clear();
            error::send(path.string() + ": the program could not be started.");
        }
        wait_status ws(st);
        if (ws.is_exit()) {
            d.alive = false;
            d.threads.clear();
            error::send(path.string() + ": the program exited before it started.");
        }
        if (ws.type() == wait_status::kind::event_stop && ws.event() == PTRACE_EVENT_EXEC) {
            break;
        }
        int sig = ws.type() == wait_status::kind::signal_stop ? ws.signo() : 0;
        try_ptrace(PTRACE_CONT, child, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
    }
    // A single-step from the exec stop traps first at the new program's entry without
    // running anything (the step over execve's return): take that trap now, so that the
    // first `stepi` after `starti` executes an instruction, as in gdb.
    std::uint64_t entry = d.read_pc(child);
    if (try_ptrace(PTRACE_SINGLESTEP, child, nullptr, nullptr)) {
        int st = 0;
        if (internal::wait_tid(child, &st, 0) == child) {
            wait_status ws(st);
            if (ws.is_exit()) {
                d.alive = false;
                d.threads.clear();
                error::send(path.string() + ": the program exited before it started.");
            }
            if (ws.type() == wait_status::kind::signal_stop && ws.signo() != SIGTRAP) {
                proc->set_pending_signal(child, ws.signo());   // delivered when it runs
            }
        }
    }
    d.leader()->st = tstate::stopped;
    d.open_mem();
    d.init_shared_libraries();
    d.leader()->step_over_pc = d.read_pc(child);
    if (*d.leader()->step_over_pc != entry) {
        log::write(log::channel::ptrace, "launch: the settling step ran an instruction ({:#x} -> {:#x})", entry,
                   *d.leader()->step_over_pc);
    }
    log::write(log::channel::ptrace, "launched {} as {}", prog, child);
    return proc;
}

std::unique_ptr<process> ptrace_process::adopt_fork_child(pid_t child, bool vforked) {
    // impl::release_fork_child(keep) waited for the child's first stop and cleaned its memory.
    std::unique_ptr<ptrace_process> proc(new ptrace_process());
    auto& d = *proc->impl_;
    d.pid = child;
    d.attached = false;
    const pid_t vfork_parent = vforked ? impl_->pid : 0;
    d.vfork_parent = vfork_parent;
    // A scratch page mapped in the shared memory would stay in the parent's: single-step
    // over breakpoints until exec (which clears ool_disabled).
    d.ool_disabled = vfork_parent != 0;
    d.elves = impl_->elves;
    d.add_thread(child, tstate::stopped);
    d.open_mem();
    d.init_shared_libraries();
    log::write(log::channel::ptrace, "adopted fork child {}", child);
    return proc;
}

void ptrace_process::release_fork_child(pid_t child) {
    // Traced by us and stopped: taken over only to detach it (its memory is clean already).
    try {
        adopt_fork_child(child, false)->detach();
    } catch (const std::exception& e) {
        log::write(log::channel::ptrace, "letting fork child {} of {} go: {}", child, impl_->pid, e.what());
    }
}

std::unique_ptr<process> process::attach(pid_t pid, elf_provider elves) {
    internal::wakeup_init();
    if (pid <= 0) {
        error::send("ptrace: No such process.");
    }
    std::unique_ptr<ptrace_process> proc(new ptrace_process());
    auto& d = *proc->impl_;
    d.pid = pid;
    d.attached = true;
    d.elves = std::move(elves);
    // Read before we seize it: once traced, a stopped task shows as t either way.
    d.job_control_stopped = internal::thread_state_letter(pid, pid) == 'T';

    // Threads can be created while we attach: walk /proc/PID/task until a pass finds no
    // task we have not seized yet (LLDB's NativeProcessLinux::Attach).
    std::set<pid_t> seized;
    for (bool found_new = true; found_new;) {
        found_new = false;
        auto tasks = internal::list_tasks(pid);
        if (tasks.empty() && seized.empty()) {
            d.alive = false;
            error::send("ptrace: No such process.");
        }
        for (pid_t tid : tasks) {
            if (seized.count(tid)) {
                continue;
            }
            auto r = try_ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(attach_options_mask));
            if (!r) {
                if (tid == pid || seized.empty()) {
                    // Undo what we did so far; the process must not notice the attempt.
                    for (pid_t s : seized) {
                        try_ptrace(PTRACE_DETACH, s, nullptr, nullptr);
                    }
                    d.alive = false;
                    d.threads.clear();
                    error::send(r.err == ESRCH ? "ptrace: No such process."
                                : r.err == EPERM ? "ptrace: Operation not permitted."
                                                 : std::string("ptrace: ") + std::strerror(r.err) + ".");
                }
                continue;   // a thread that exited meanwhile
            }
            seized.insert(tid);
            found_new = true;
            // Leader first, then the others in /proc order.
            auto& t = tid == pid ? *d.threads.insert(d.threads.begin(), std::make_unique<thread_record>(d, tid))->get()
                                 : d.add_thread(tid, tstate::running);
            t.st = tstate::running;
        }
    }
    // Attached threads are running: stop them all. A signal that reaches a thread while
    // we stop it is queued as an event and kept as its pending signal (so detach delivers
    // it again: nothing is lost).
    d.running = true;
    d.stop_all();
    if (d.end) {
        d.reap_everything();
        error::send("ptrace: No such process.");
    }
    d.running = false;
    // Signals seen while attaching are not reported as stops, but stay pending.
    d.queue.clear();
    // A SIGSTOP sent just before we came, still pending: the job-control stop is about
    // to begin (slurmstepd's SIGSTOP, dequeued after its PTRACE_DETACH). Either we took it
    // while stopping the threads, or the task had not run since: our interrupt's trap
    // comes before the kernel takes a queued signal, so the SIGSTOP is still in the queue
    // and would stop the process at its first resume (then reported as a signal).
    if (auto* l = d.leader(); l && (l->pending_signal == SIGSTOP || internal::signal_queued(pid, pid, SIGSTOP))) {
        d.job_control_stopped = true;
    }
    d.open_mem();
    d.init_shared_libraries();
    if (auto* l = d.leader()) {
        try {
            l->step_over_pc = d.read_pc(pid);
        } catch (const error&) {
        }
    }
    log::write(log::channel::ptrace, "attached to {} ({} threads)", pid, d.threads.size());
    return proc;
}

void ptrace_process::impl::reap_everything() {
    // Non-leader threads first: the leader's exit is reported only once every other
    // thread of the group has been reaped. Unknown tasks (clones whose event we never
    // saw) are found through /proc.
    for (int round = 0; round < 1000; ++round) {
        std::set<pid_t> tids;
        for (auto& t : threads) {
            tids.insert(t->tid_);
        }
        for (pid_t t : internal::list_tasks(pid)) {
            tids.insert(t);
        }
        tids.erase(pid);
        internal::wakeup_drain();
        for (pid_t t : tids) {
            int st;
            internal::wait_tid(t, &st, WNOHANG);
        }
        int st = 0;
        pid_t r = internal::wait_tid(pid, &st, WNOHANG);
        if (r == pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
            if (!end) {
                stop_reason why;
                why.tid = pid;
                why.kind = WIFEXITED(st) ? stop_kind::exited : stop_kind::terminated;
                why.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
                why.signo = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
                end = why;
            }
            break;
        }
        if (r < 0) {
            break;   // ECHILD: already reaped (mark_dead saw its exit)
        }
        if (r == pid) {
            continue;   // a stop on the way to death
        }
        internal::wakeup_wait(100);
    }
    alive = false;
    running = false;
    threads.clear();
    queue.clear();
    sites.clear();
    if (mem_fd >= 0) {
        ::close(mem_fd);
        mem_fd = -1;
    }
}

void ptrace_process::detach() {
    auto& d = *impl_;
    d.release_deferred_children();
    if (!d.alive) {
        return;
    }
    if ((d.running || d.others_running) && !d.end) {
        d.stop_all();
        d.others_running = false;
        d.normalise_out_of_line();
        d.normalise_pads();
    }
    if (d.end) {
        d.reap_everything();
        return;
    }
    // Restore every patched byte and page protection while everything is stopped. While
    // a vfork child shared our memory, the guards and int3s are out of it already (and an
    // mprotect injected in vfork() would be overtaken by its VFORK_DONE stop).
    d.drop_watchpoints(!d.vfork_pending);
    for (auto& [addr, s] : d.sites) {
        if (s->is_enabled()) {
            d.remove_int3(*s);   // a fast site's jump too: its pad stays mapped, disarmed
        }
    }
    d.sites.clear();
    d.pads.clear();
    for (auto& t : d.threads) {
        if (t->st == tstate::zombie) {
            continue;
        }
        // PTRACE_DETACH's data argument delivers the signal the thread was stopped with,
        // so a signal that arrived while we held the process is not lost.
        try_ptrace(PTRACE_DETACH, t->tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(t->pending_signal)));
    }
    d.threads.clear();
    d.queue.clear();
    d.alive = false;
    d.running = false;
    if (d.mem_fd >= 0) {
        ::close(d.mem_fd);
        d.mem_fd = -1;
    }
    log::write(log::channel::ptrace, "detached from {}", d.pid);
}

void ptrace_process::kill() {
    auto& d = *impl_;
    d.release_deferred_children();
    if (!d.alive) {
        return;
    }
    ::kill(d.pid, SIGKILL);
    d.reap_everything();
}

pid_t ptrace_process::pid() const { return impl_->pid; }

std::filesystem::path ptrace_process::executable() const {
    if (!impl_->exe_path.empty()) {
        return impl_->exe_path;
    }
    return internal::process_exe(impl_->pid);
}

bool ptrace_process::is_attached() const { return impl_->attached; }
bool ptrace_process::is_alive() const { return impl_->alive; }

const std::vector<loaded_module>& ptrace_process::modules() { return impl_->modules; }

}  // namespace ompdbg::tracer
