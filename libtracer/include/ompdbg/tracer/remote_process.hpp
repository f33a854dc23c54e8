#pragma once
/// A live process on another host, reached through a gdbserver agent over gdb's Remote
/// Serial Protocol (LLDB's ProcessGDBRemote): the same `process` interface as a process
/// traced here, so that nothing above libtracer asks whether a process is remote. One
/// `remote_connection` (one agent, `gdbserver --multi`) serves every process of its host.

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/rsp_client.hpp"

namespace ompdbg::tracer {

class remote_files;
namespace internal {
class readonly_segments;
}

/// One agent and the protocol spoken with it, shared by every process it serves. The
/// agent runs non-stop (QNonStop:1): each process runs and stops on its own, so some
/// processes of a host can be stopped while others of it run. A process still stops as a
/// whole, as a local one does: when one of its threads reports a stop, the others are asked
/// to stop (`vCont;t:pPID.-1`) and the stop is handed out once every thread that ran has
/// reported. Resumes are batched: one vCont for every process that asked to run meanwhile.
/// Stops arrive as `%Stop` notifications, drained with vStopped, each queued for the
/// process it names.
class remote_connection {
public:
    /// Opens `spec`: "| COMMAND" runs COMMAND (a remote shell starting `gdbserver --multi
    /// -` on its host) and speaks over its stdin/stdout; "HOST:PORT" connects over TCP.
    /// `extended`: gdb's `target extended-remote` (attach, and the agent stays after a
    /// detach); else `target remote`. `timeout_ms`: the limit for any one reply. Throws with
    /// the remote shell's own message when the agent does not start ("bash: gdbserver:
    /// command not found"), the connection fails, or the agent lacks non-stop mode.
    static std::shared_ptr<remote_connection> open(const std::string& spec, bool extended, int timeout_ms = 20000);
    /// Over a transport the caller made (tests: a scripted one).
    static std::shared_ptr<remote_connection> open(std::unique_ptr<rsp::transport> link, bool extended, int timeout_ms);

    /// The client, for packets about a stopped process (non-stop: others may run).
    rsp::client& client();
    bool is_extended() const { return client_->is_extended(); }
    /// As gdb names the connection: "extended-remote | CMD", "remote HOST:PORT".
    std::string describe() const;
    /// The host the agent runs on: the word before `gdbserver` in a remote-shell command,
    /// the HOST of HOST:PORT; empty when unknown.
    std::string host() const;
    /// The host's files fetched through this agent (vFile:), shared by its processes.
    remote_files& files();
    /// `monitor CMD`: the agent's output.
    std::string monitor(const std::string& command) { return client().monitor(command); }

    /// A completed stop of one process, and whether the debugger had asked for it.
    struct event {
        rsp::stop_reply reply;
        bool requested = false;
        /// Signals other threads of the process stopped with while it was being stopped:
        /// theirs to receive when it runs again.
        std::map<pid_t, int> other_signals;
    };
    /// vAttach: the process stopped as a whole (non-stop: its threads stopped with vCont;t
    /// and their stops collected). Throws as client::attach.
    rsp::stop_reply attach(pid_t pid);
    /// vRun: starts `argv` on the agent's host, stopped at its first instruction.
    rsp::stop_reply run(const std::vector<std::string>& argv);
    /// Records that `pid` runs with `actions`: sent at once when every process of the agent
    /// runs or has asked to, else with the others at the next wait.
    void request_resume(pid_t pid, std::vector<rsp::resume_action> actions);
    /// Asks `pid` to stop (vCont;t); its stop comes through wait_for with `requested`.
    void request_stop(pid_t pid);
    /// A process of this agent (remote_process's constructor; forget() ends it).
    void add_member(pid_t pid);
    /// Whether `pid` was resumed and has not had its stop handed out since.
    bool is_running(pid_t pid) const;
    /// `pid`'s next stop within `timeout_ms` (0: only what is there), or nullopt. Sends the
    /// outstanding resumes first; stops of other processes met meanwhile are queued for
    /// them. Throws when the connection fails (then every process of it is lost).
    std::optional<event> wait_for(pid_t pid, int timeout_ms);
    /// The process is no longer ours (detached, killed, ended): forget its requests.
    void forget(pid_t pid);
    /// Whether the connection failed (closed, timed out, out of step); why, in one line.
    bool is_lost() const { return !lost_reason().empty(); }
    const std::string& lost_reason() const {
        return lost_.empty() ? const_cast<rsp::client&>(*client_).io().closed_reason() : lost_;
    }

private:
    /// What the connection knows of one process's run.
    struct member {
        std::vector<rsp::resume_action> to_send;   ///< asked to run, vCont not sent yet
        bool resume_pending = false;
        bool running = false;                      ///< a vCont went out, its stop is not complete
        bool whole = false;                        ///< every thread was resumed (else those of `ran`)
        std::set<pid_t> ran;                       ///< the threads resumed one by one
        bool stopping = false;                     ///< vCont;t went out
        bool requested = false;                    ///< the debugger asked for the stop
        std::optional<rsp::stop_reply> reason;     ///< the first stop of the run that matters
        std::map<pid_t, int> other_signals;
        std::set<pid_t> stopped;                   ///< threads that reported since the vCont
        std::vector<event> ready;                  ///< completed stops not handed out yet
    };
    explicit remote_connection(std::unique_ptr<rsp::client> c) : client_(std::move(c)) {}
    /// Sends one vCont for every process that asked to run.
    void flush_resumes();
    /// Reads one notification within `timeout_ms` with the stops queued behind it, then
    /// stops and completes what they call for; false when nothing arrived.
    bool pump(int timeout_ms);
    void handle(const rsp::stop_reply& r);
    /// Asks a process with a stop to report to stop its other threads, and hands out its
    /// stop once every thread that ran has reported (`relist`: the thread list is read).
    void settle(bool relist);
    void complete(pid_t pid, member& m);
    /// Runs `f`; a failure of the connection marks every process of it lost.
    template <typename F>
    auto guarded(F&& f) -> decltype(f());

    std::unique_ptr<rsp::client> client_;
    std::shared_ptr<remote_files> files_;
    std::map<pid_t, member> members_;
    std::string lost_;
};

class remote_thread;

class remote_process final : public process {
public:
    /// vAttach: stops every thread of `pid` on the agent's host. Throws "Cannot attach to
    /// process N on the remote host: ..." when the agent cannot.
    static std::unique_ptr<remote_process> attach(std::shared_ptr<remote_connection> conn, pid_t pid,
                                                  elf_provider elves = {});
    /// `run` over `target extended-remote`: the agent starts `program` (its path on the
    /// agent's host) with `args`; the process stops at its first instruction.
    static std::unique_ptr<remote_process> launch(std::shared_ptr<remote_connection> conn,
                                                  const std::filesystem::path& program,
                                                  const std::vector<std::string>& args, elf_provider elves = {});
    /// `target remote`: the process the agent already holds (started or attached by it),
    /// from the stop reply of `?`. Throws when the agent holds none.
    static std::unique_ptr<remote_process> current(std::shared_ptr<remote_connection> conn, elf_provider elves = {});
    /// The process the agent holds stopped, or nullptr when it holds none (a `gdbserver
    /// --multi` that has not attached anything, or whose processes ended).
    static std::unique_ptr<remote_process> held(std::shared_ptr<remote_connection> conn, elf_provider elves = {});
    ~remote_process() override;

    /// Resumed and its stop not yet reported (process_group polls remote members by this).
    bool is_running() const { return running_; }
    /// gdb's `set trust-readonly-sections` for every remote process (default on, unlike
    /// gdb): the read-only segments of a module whose file here has the build-id the
    /// process maps are read from that file, not through the agent; pages the debugger
    /// wrote are always read from the process.
    static void set_trust_readonly_sections(bool on);
    static bool trusts_readonly_sections();

    // target
    pid_t pid() const override { return pid_; }
    std::filesystem::path executable() const override { return exe_; }
    void forget_cached_memory() override { pages_.clear(); }
    std::uint64_t resume_count() const override { return resumes_; }
    void read_memory(virt_addr addr, std::span<std::byte> out) override;
    std::size_t try_read_memory(virt_addr addr, std::span<std::byte> out) override;
    void write_memory(virt_addr addr, std::span<const std::byte> data) override;
    std::vector<thread*> threads() override;
    thread* find_thread(pid_t tid) override;
    const std::vector<loaded_module>& modules() override;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> vdso_range() override;

    // process
    bool is_attached() const override { return true; }
    bool is_alive() const override { return alive_; }
    void resume() override;
    stop_reason step_instruction(pid_t tid) override;
    stop_reason wait_for_stop() override;
    std::optional<stop_reason> wait_for_stop(int timeout_ms) override;
    void set_early_breakpoint_reports(bool) override {}
    void stop_others() override {}
    bool others_running() const override { return false; }
    /// Async-signal-safe: only records the request; the next wait sends it (vCont;t).
    void interrupt() override;
    void set_report_forks(bool on) override { report_forks_ = on; }
    void set_keep_fork_children(bool on, bool vfork_too) override {
        keep_children_ = on;
        keep_vfork_children_ = on && vfork_too;
    }
    /// The agent holds the kept child stopped and it is a member of the same connection
    /// already (no vAttach), its memory cleaned of our breakpoints. A vforked child's
    /// breakpoints are taken out of the memory it shares with this process (their original
    /// bytes written back there) at its exec or exit.
    std::unique_ptr<process> adopt_fork_child(pid_t child, bool vforked) override;
    /// Not let go at once: with `D;PID` before this process next runs (release_children).
    void release_fork_child(pid_t child) override;
    void finish_vfork() override {}
    void set_syscall_catch(std::optional<std::vector<int>> numbers) override;
    std::optional<siginfo_t> last_siginfo(pid_t) const override { return std::nullopt; }
    std::optional<siginfo_t> stop_siginfo(pid_t) const override { return std::nullopt; }
    void set_pending_signal(pid_t tid, int signo) override;
    int pending_signal(pid_t tid) const override;
    breakpoint_site& add_breakpoint_site(virt_addr addr, bool internal) override;
    void remove_breakpoint_site(virt_addr addr) override;
    breakpoint_site* find_breakpoint_site(virt_addr addr) override;
    void enable_site(virt_addr addr) override;
    void disable_site(virt_addr addr) override;
    int add_watchpoint(virt_addr addr, std::size_t size, watch_kind kind, watch_mode mode) override;
    void remove_watchpoint(int id) override;
    int hardware_watchpoints_in_use() const override { return static_cast<int>(watches_.size()); }
    step_over_counts step_overs() const override { return {}; }
    void detach() override;
    void kill() override;
    std::string connection() const override { return conn_->describe(); }
    std::string agent_host() const override { return conn_->host(); }
    /// Forgets the process without detaching or killing it.
    bool disconnect() override;

private:
    friend class remote_thread;
    remote_process(std::shared_ptr<remote_connection> conn, pid_t pid, elf_provider elves);
    /// After a stop: threads re-listed, registers and memory forgotten; the stop's thread.
    stop_reason take_stop(const rsp::stop_reply& r, bool asked = false);
    /// wait_for_stop(int) for one stop, also one that is not reported (restart_).
    std::optional<stop_reason> wait_once(int timeout_ms);
    void refresh_threads();
    /// The address of the enabled breakpoint site at `t`'s pc, or 0.
    std::uint64_t enabled_site_at_pc(thread& t);
    /// Steps every thread sitting on an enabled site over it; a stop other than the step's
    /// SIGTRAP (a signal, the end) is returned: it is the process's next stop.
    std::optional<rsp::stop_reply> step_over_sites();
    void forget_after_resume();
    /// What a single step may change (registers, memory), keeping the thread list and the
    /// modules: the steps of software watchpoints.
    void forget_registers_and_memory();
    /// resume() without its handling of a lost agent.
    void resume_now();
    std::uint64_t auxv_entry(std::uint64_t type);
    /// Whether `m`'s local file is the one mapped on the host: the bytes of its build-id
    /// note in the target's memory equal the file's (also when there is nothing to compare:
    /// `compared` says whether there was).
    bool same_build_id(const loaded_module& m, bool& compared);
    rsp::client& rsp() { return conn_->client(); }
    void require_alive() const;

    std::shared_ptr<remote_connection> conn_;
    pid_t pid_;
    elf_provider elves_;
    std::filesystem::path exe_;
    bool alive_ = true;
    bool running_ = false;
    std::vector<std::unique_ptr<remote_thread>> threads_;
    bool threads_known_ = false;
    std::optional<std::vector<loaded_module>> modules_;
    std::optional<std::string> auxv_;
    std::map<std::uint64_t, std::vector<std::byte>> pages_;   ///< page cache, dropped on resume
    /// Read-only segments served from files (set_trust_readonly_sections).
    std::unique_ptr<internal::readonly_segments> readonly_;
    /// The build-id notes modules() read in one batch, by run-time address (empty outside it).
    std::map<std::uint64_t, std::vector<std::byte>> notes_;
    std::uint64_t resumes_ = 0;   ///< resume_count(): forget_after_resume() calls
    std::map<std::uint64_t, std::unique_ptr<breakpoint_site>> sites_;
    breakpoint_site::id_type next_site_id_ = 1;
    std::map<pid_t, int> pending_signals_;
    std::optional<std::vector<int>> syscall_catch_;   ///< what QCatchSyscalls last asked for
    /// Watchpoints the agent holds in its debug registers (Z2-Z4), by add_watchpoint's id.
    struct remote_watch {
        std::uint64_t addr = 0;
        std::size_t size = 0;
        int z_type = 2;   ///< the Z packet that inserted it: 2 write, 3 read, 4 access
    };
    std::map<int, remote_watch> watches_;
    int next_watch_id_ = 1;
    /// The watchpoint a stop reply's watch/rwatch/awatch field names (its address inside).
    std::optional<int> watch_of(const rsp::stop_reply& r, std::uint64_t& addr) const;
    /// Software watchpoints (remote_watch.cpp): while any is set, the process runs one
    /// instruction of one thread at a time (vCont;s, the other threads continue) and the
    /// watched bytes are compared after each, as gdb does on a remote target.
    struct soft_watch {
        std::uint64_t addr = 0;
        std::vector<std::byte> bytes;   ///< the value last seen
    };
    std::map<int, soft_watch> soft_watches_;
    bool soft_stepping_ = false;        ///< resumed: runs by single steps
    bool soft_step_sent_ = false;       ///< a step went out, its stop has not come
    pid_t soft_tid_ = 0;                ///< the thread that steps (the last one stopped)
    std::optional<stop_reason> soft_hit_;   ///< a change seen before the first step
    /// The first software watchpoint whose bytes changed since last seen (they are noted).
    std::optional<int> soft_watch_changed();
    /// A watchpoint stop of `tid` for software watchpoint `id`.
    stop_reason soft_watch_stop(int id, pid_t tid);
    /// Starts a run by single steps (resume_now when software watchpoints are set).
    void soft_resume();
    /// wait_for_stop while running by single steps.
    std::optional<stop_reason> soft_wait(int timeout_ms);
    /// Forks, vforks and execs (remote_forks.cpp): gdbserver stops at each (fork-events+)
    /// and holds the child stopped until told. The stop reply `r` of such an event as a
    /// stop_reason (`why`: its thread), the child cleaned of our breakpoints and let go
    /// (at the next resume when the fork is reported) or kept for adopt_fork_child
    /// (set_keep_fork_children); nullopt for any other stop.
    std::optional<stop_reason> process_event(const rsp::stop_reply& r, stop_reason why, bool asked);
    /// Detaches the fork children whose fork was reported (`D;PID`), before any resume.
    void release_children();
    /// Runs the process on after a stop that is not reported, as it ran (continue or step).
    void restart();
    bool report_forks_ = false;
    std::vector<pid_t> released_children_;   ///< cleaned, detached at the next resume
    /// set_keep_fork_children: fork (vfork) children stay held by the agent for
    /// adopt_fork_child, and every fork is reported.
    bool keep_children_ = false;
    bool keep_vfork_children_ = false;
    /// Kept children not adopted yet: let go (as released_children_) at the next resume.
    std::vector<pid_t> kept_children_;
    /// A vfork child not yet exec'ed or exited: the parent whose memory it shares, where
    /// the original bytes of our sites go back at its exec or exit (the agent forgets them
    /// with the old image without writing them back).
    pid_t vfork_parent_ = 0;
    /// Puts back the original bytes of our sites in the vfork parent's memory.
    void restore_vfork_parent_memory();
    /// A vfork child shares our memory: our breakpoints are out of it (the agent's z0 in the
    /// parent) until the parent's `vforkdone`; sites set meanwhile are planted then.
    bool vfork_lifted_ = false;
    bool restart_ = false;       ///< take_stop met an event that is not reported: run on
    pid_t stepping_tid_ = 0;     ///< step_instruction's thread while it runs, else 0
    std::optional<stop_reason> end_;
    std::optional<rsp::stop_reply> early_stop_;   ///< from step_over_sites, reported by the next wait
    std::atomic<bool> stop_wanted_{false};        ///< interrupt() asked, not yet sent
    /// The pc of each thread whose stop was reported there: only these step over the
    /// breakpoint at their pc when resumed (the others hit it: their hit is not lost).
    std::map<pid_t, std::uint64_t> reported_pcs_;
};

}  // namespace ompdbg::tracer
