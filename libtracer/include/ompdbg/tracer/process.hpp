#pragma once
/// A live process (launched or attached), all-stop: the interface every live process
/// implements, whether libtracer drives it with ptrace on this host (process::launch,
/// process::attach: ptrace_process) or through a gdbserver agent on another host
/// (remote_process.hpp). Owns its threads, breakpoint sites and the shared-library list.
/// RAII: the destructor kills a launched process and detaches from an attached one.

#include <sys/types.h>

#include <csignal>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/tracer/breakpoint_site.hpp"
#include "ompdbg/tracer/stop_reason.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/watchpoint.hpp"

namespace ompdbg::tracer {

struct launch_options {
    /// Extra "NAME=VALUE" entries; they override the inherited environment.
    std::vector<std::string> env;
    bool disable_aslr = true;          ///< gdb's default (personality ADDR_NO_RANDOMIZE)
    std::optional<std::filesystem::path> stdin_path, stdout_path;
    bool stdout_append = false;   ///< stdout_path opened for appending (`>>`), not truncated
    /// The program's stderr: a file (`2>`, `2>>`), or its stdout (`2>&1`).
    std::optional<std::filesystem::path> stderr_path;
    bool stderr_append = false;
    bool stderr_to_stdout = false;
    std::optional<std::filesystem::path> working_dir;
    /// When >= 0 (and no stdout_path): this descriptor of ours becomes the program's
    /// stdout (`--json` passes 2 so that stdout carries nothing but JSON).
    int stdout_fd = -1;
    /// Where `modules()` get their `elf` (the app's cache); empty: opened here.
    elf_provider elves;
};

class process : public target {
public:
    /// Starts `path` with `args` (argv[1..]) stopped at its first instruction (exec stop).
    /// Throws "<path>: No such file or directory", "<path>: Permission denied", or the
    /// exec errno carried back over a CLOEXEC pipe.
    static std::unique_ptr<process> launch(const std::filesystem::path& path,
                                           const std::vector<std::string>& args,
                                           const launch_options& opts = {});
    /// Attaches to every thread of `pid` (PTRACE_SEIZE + interrupt, walking
    /// /proc/PID/task until no new thread appears) and stops them all. Throws
    /// "ptrace: No such process." / "ptrace: Operation not permitted." (gdb's wording).
    static std::unique_ptr<process> attach(pid_t pid, elf_provider elves = {});
    ~process() override = default;

    // target
    pid_t pid() const override = 0;
    bool is_live() const override { return true; }
    std::filesystem::path executable() const override = 0;
    void forget_cached_memory() override = 0;
    void read_memory(virt_addr addr, std::span<std::byte> out) override = 0;
    std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) override = 0;
    void write_memory(virt_addr addr, std::span<const std::byte> data) override = 0;
    std::vector<thread*> threads() override = 0;
    thread* find_thread(pid_t tid) override = 0;
    const std::vector<loaded_module>& modules() override = 0;

    virtual bool is_attached() const = 0;          ///< attached (vs launched)
    virtual bool is_alive() const = 0;             ///< false once exited/terminated/killed/detached
    /// Attached while in a job-control stop (SIGSTOP, /proc state T): resumed as it is,
    /// it would stay stopped, as it would without us. Slurm leaves the tasks of a step
    /// launched for a debugger so (slurmstepd's pdebug_trace_process). A process reached
    /// through a remote agent never is (the agent owns its stops).
    virtual bool was_job_control_stopped() const { return false; }
    /// Ends that stop as the SIGCONT its owner would send (srun's MPIR protocol leaves it
    /// to the debugger: slurmstepd wakes only the tasks nobody traces), without running
    /// any of the program's code: the process stays stopped under ptrace, and the SIGCONT
    /// is not reported later. Does nothing when it was not job-control stopped. Throws when
    /// the process ends meanwhile.
    virtual void end_job_control_stop() {}

    /// Resumes every thread (all-stop → running). A thread sitting on an enabled
    /// breakpoint is moved over it first without a second user-visible stop. Pending
    /// signals of threads are delivered unless cleared with set_pending_signal(tid, 0).
    virtual void resume() = 0;
    /// Threads that resume() leaves stopped until the next call (an inferior function call
    /// runs the selected thread alone, as gdb's calls leave the others stopped); empty: none
    /// held. Threads created meanwhile run. Default (remote targets): every thread runs.
    virtual void hold_threads(std::vector<pid_t> tids) { (void)tids; }
    /// The pc at which `tid` was last reported stopped, where resume() steps over a
    /// breakpoint instead of hitting it again; nullopt when none. An inferior call saves it
    /// and puts it back with the caller's registers.
    virtual std::optional<std::uint64_t> step_over_pc(pid_t tid) const { (void)tid; return std::nullopt; }
    virtual void set_step_over_pc(pid_t tid, std::optional<std::uint64_t> pc) { (void)tid; (void)pc; }
    /// Single-steps one thread (others stay stopped); steps over a breakpoint at pc.
    /// Returns the stop (single_step, or exited/signal...).
    virtual stop_reason step_instruction(pid_t tid) = 0;
    /// Waits until the process stops (any thread event) and stops every other thread.
    /// Returns the event; internal breakpoints are handled inside (library events are
    /// reported as library_event so the app can resolve pending breakpoints).
    virtual stop_reason wait_for_stop() = 0;
    /// Like wait_for_stop but returns nullopt after `timeout_ms` with the process running.
    virtual std::optional<stop_reason> wait_for_stop(int timeout_ms) = 0;
    /// Lets wait_for_stop report a breakpoint hit of one thread, or a thread's creation
    /// (the creator and the new thread stopped) or exit, before the other threads are
    /// stopped (the report says `others_running`): the debugger decides with that thread
    /// alone whether the event goes on at once (a silent counting breakpoint, a new thread
    /// announced), and then resume() runs only the threads that are stopped. Anything else
    /// must call stop_others() first. Off by default; hits of internal sites, and any event
    /// while watchpoints, `catch syscall` or another queued event are in play, still stop
    /// everything first.
    virtual void set_early_breakpoint_reports(bool on) = 0;
    /// With early reports: a new thread's creator, held in its clone system call until now,
    /// is resumed as soon as the new thread has stopped, before the creation is reported,
    /// so the report's `tid` may be running (the new thread is stopped). For a debugger that
    /// reads only the new thread to announce it. Off by default; a no-op where early reports
    /// are not implemented.
    virtual void set_resume_creators_early(bool) {}
    /// Completes the all-stop after an early report (a no-op otherwise): every thread that
    /// still runs is interrupted; what they report is queued for the following waits.
    virtual void stop_others() = 0;
    /// After an early report, before stop_others(): threads other than the reported one
    /// may be running (their registers cannot be read).
    virtual bool others_running() const = 0;
    /// Async-signal-safe: asks the running process to stop (wait_for_stop then reports
    /// `interrupted`). Safe to call from a SIGINT handler.
    virtual void interrupt() = 0;

    /// With `on`, fork/vfork events stop the process (stop_kind::fork); off (default) they
    /// are not reported. A child that is let go (detach-on-fork, follow the parent:
    /// `child_released`) is cleaned of our breakpoints at once but detached only when the
    /// process is next resumed, stepped, detached or killed, so that the debugger can say
    /// so before the child runs (gdb's "[Detaching after fork from child process N]").
    virtual void set_report_forks(bool on) = 0;
    /// gdb's `follow-fork-mode child` / `detach-on-fork off`: with `on`, a fork child is
    /// not let go: it stays traced, stopped in its first stop, with our breakpoints and
    /// watchpoint guards taken out of its copy of the memory, and the fork is reported
    /// (stop_kind::fork, `new_tid`) even without set_report_forks. adopt_fork_child then
    /// makes it a process of its own. A vfork child is kept only with `vfork_too` (gdb
    /// follows one only in follow-fork-mode child): it shares our memory, so our
    /// breakpoints and guards leave it, and this process (which the kernel holds in
    /// vfork() until the child execs or exits) puts them back at PTRACE_EVENT_VFORK_DONE
    /// on its next resume; breakpoint sites added meanwhile are planted then too.
    virtual void set_keep_fork_children(bool on, bool vfork_too = false) = 0;
    /// Takes over the fork child `child` that this process kept and reported (stop_kind::fork,
    /// `new_tid`): a process of its own reached the same way as this one (traced here, or
    /// held by the same remote agent), launched-like (kill() ends it), with one stopped
    /// thread, its shared libraries read from its memory, no breakpoints. `vforked`: the
    /// child was vfork()ed: until it execs or exits, its breakpoint sites are in the memory
    /// it shares with this process (which holds none meanwhile); they are taken out of it
    /// at the child's exec or exit. Throws when `child` is not a kept child of this process.
    virtual std::unique_ptr<process> adopt_fork_child(pid_t child, bool vforked = false) = 0;
    /// Lets go the kept fork child `child` that nobody follows (a step ran after `catch
    /// fork` reported it): it runs on, free of our breakpoints, without being adopted. A
    /// child traced here is detached at once; one held by a remote agent is let go before
    /// this process next runs (as a child that was never kept). Never throws (a child
    /// that is gone already has nothing to let go).
    virtual void release_fork_child(pid_t child) = 0;
    /// After a kept vfork child exec'ed or exited: runs the thread that vforked (stopped, the
    /// others stay so) to its PTRACE_EVENT_VFORK_DONE stop, where our breakpoints and
    /// watchpoint guards go back into the memory, and leaves it stopped there, so that a
    /// detach then restores everything as for any process. Nothing when no vfork is pending.
    virtual void finish_vfork() = 0;

    /// gdb's `catch syscall`: nullopt (the default) never stops at system calls; an empty
    /// list stops at every one; otherwise at those x86-64 numbers. A caught call stops
    /// twice, syscall_entry then syscall_exit. While on, every system call of the process
    /// costs two ptrace stops (PTRACE_SYSCALL); the uncaught ones are resumed inside.
    virtual void set_syscall_catch(std::optional<std::vector<int>> numbers) = 0;

    /// The siginfo of the last signal `tid` stopped with (PTRACE_GETSIGINFO at that stop),
    /// for gdb's `$_siginfo`; nullopt when it has not stopped with a signal.
    virtual std::optional<siginfo_t> last_siginfo(pid_t tid) const = 0;
    /// The siginfo of the stop `tid` is in now (PTRACE_GETSIGINFO: the SIGTRAP of a
    /// breakpoint or a step too, as gdb's `$_siginfo` reads it); nullopt when the thread is
    /// not stopped or the kernel has none (a group-stop), and on targets without ptrace.
    virtual std::optional<siginfo_t> stop_siginfo(pid_t tid) const = 0;

    /// Signal to deliver to `tid` on the next resume (0 = none). Set from the last stop.
    virtual void set_pending_signal(pid_t tid, int signo) = 0;
    virtual int pending_signal(pid_t tid) const = 0;

    /// Plants (or shares) a breakpoint site at `addr`; enabled on return. Throws when the
    /// address is not writable ("Cannot insert breakpoint N. Cannot access memory ...").
    virtual breakpoint_site& add_breakpoint_site(virt_addr addr, bool internal = false) = 0;
    /// Drops one reference; the int3 is removed when no reference remains.
    virtual void remove_breakpoint_site(virt_addr addr) = 0;
    virtual breakpoint_site* find_breakpoint_site(virt_addr addr) = 0;
    virtual void enable_site(virt_addr addr) = 0;
    virtual void disable_site(virt_addr addr) = 0;

    /// What a jump pad at a site calls (issue 21): the agent's evaluator, the site's record
    /// in the agent's control block, and the function around the site (whose code is
    /// checked for branches into the bytes the jump replaces). `condition`, the record's
    /// condition bytecode (empty: none), is also compiled into the pad where it can be, so
    /// that a false condition costs no call of the agent.
    struct fast_site_request {
        virt_addr evaluate;
        virt_addr record;
        std::uint64_t function_start = 0, function_end = 0;
        std::vector<std::uint8_t> condition;
        /// The agent's control block when the record only counts its hits
        /// (OMPDBG_ACTION_COUNT): the pad then counts them itself where it can.
        std::optional<virt_addr> counting_control;
    };
    /// Replaces the int3 of the enabled site `addr` with a jump to a pad that calls
    /// `evaluate(record, registers)` and stops only when it answers true; such a stop is
    /// reported as a hit of the site. Needs every thread stopped. nullopt when done;
    /// otherwise why the int3 stays (a site that cannot hold the jump, no pad memory...).
    virtual std::optional<std::string> make_site_fast(virt_addr addr, const fast_site_request& req) {
        (void)addr;
        (void)req;
        return std::string("the process is reached through a remote agent");
    }
    /// Puts the int3 back at a fast site (its pad stays mapped, disarmed).
    virtual void make_site_slow(virt_addr addr) { (void)addr; }
    virtual bool is_site_fast(virt_addr addr) const {
        (void)addr;
        return false;
    }

    /// Watches [addr, addr + size) for `kind` (`hardware`: size 1, 2, 4 or 8 within one
    /// aligned 8-byte word; `software`: 1 byte to 64 KiB, watched as a whole); returns its id. `hardware` throws "Hardware watchpoint
    /// slots exhausted: all 4 debug registers are in use." when 4 are set; `software`
    /// throws when the pages cannot be protected. A write watchpoint stops (stop_kind::
    /// watchpoint) when the watched bytes change (hardware: on every write); read and
    /// access watchpoints when an access overlaps the range.
    virtual int add_watchpoint(virt_addr addr, std::size_t size, watch_kind kind, watch_mode mode) = 0;
    /// Removes a watchpoint (restores page protections, frees its debug register).
    virtual void remove_watchpoint(int id) = 0;
    /// Number of hardware slots in use.
    virtual int hardware_watchpoints_in_use() const = 0;
    /// How threads got over breakpoints on resume since launch/attach: `out_of_line` ran
    /// the instruction from a scratch slot in the target, `emulated` a call/jmp rel32, and
    /// `single_stepped` the classic remove/step/re-insert (instructions that cannot move,
    /// or OMPDBG_STEP_OVER=single-step in the environment). For tests and benchmarks.
    struct step_over_counts {
        std::uint64_t out_of_line = 0, emulated = 0, single_stepped = 0;
    };
    virtual step_over_counts step_overs() const = 0;

    /// Restores every patched byte, resumes every thread, detaches. The process runs on
    /// exactly as before (pending signals re-delivered).
    virtual void detach() = 0;
    /// SIGKILL and reap.
    virtual void kill() = 0;

    /// How the process is reached, as gdb's `info inferiors` names the connection:
    /// "native" (ptrace here), "extended-remote | CMD", "remote HOST:PORT".
    virtual std::string connection() const = 0;
    /// The host whose agent (gdbserver) reaches the process; empty for a process traced
    /// here with ptrace. Callers ask this instead of the process's concrete type.
    virtual std::string agent_host() const { return {}; }
    /// gdb's `disconnect`: forgets the process and leaves it to its agent, which decides
    /// what becomes of it when the connection closes. Returns false (and does nothing) for a
    /// process traced here: it has no agent to leave it to.
    virtual bool disconnect() { return false; }

protected:
    process() = default;
};

}  // namespace ompdbg::tracer
