#pragma once
// The state behind ompdbg::tracer::process, shared by the files that implement it:
// process_launch.cpp (launch/attach/detach/kill), process_events.cpp (the all-stop event
// loop), process_thread_status.cpp (one thread's waitpid result), process_forks.cpp (fork
// and vfork children), process_resume.cpp (resuming and stepping), process_memory.cpp
// (memory, breakpoint sites, registers), shared_libraries.cpp.

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "internal/jump_pad.hpp"
#include "internal/out_of_line.hpp"
#include "internal/wait_status.hpp"
#include "internal/watch_state.hpp"
#include "internal/ptrace_process.hpp"

namespace ompdbg::tracer {

/// What we know about one thread between waitpid results.
enum class tstate {
    running,    ///< resumed; its next waitpid result is an event
    stopping,   ///< PTRACE_INTERRUPT sent, stop not yet collected
    starting,   ///< new clone: its initial auto-attach stop not yet collected
    stopped,    ///< in a ptrace-stop
    listening,  ///< in group-stop, parked with PTRACE_LISTEN (the process got SIGSTOP)
    zombie,     ///< the leader exited while other threads live: it reports only at the end
};

class thread_record final : public thread {
public:
    thread_record(ptrace_process::impl& owner, pid_t tid) : owner_(owner), tid_(tid) {}
    pid_t tid() const override { return tid_; }
    std::string name() const override;
    thread_state state() const override;
    const registers& regs() override;
    const user_regs_struct& gp_regs() override;
    void write_regs(const registers& r) override;

    ptrace_process::impl& owner_;
    pid_t tid_;
    tstate st = tstate::stopped;
    std::optional<registers> cache;
    /// The general-purpose registers alone (gp_regs), until regs() reads the rest.
    std::optional<user_regs_struct> gp_cache;
    /// At its first stop after its clone, never resumed since: its pc is read with the
    /// general registers (PTRACE_GETREGS), which announcing it needs anyway (fs_base).
    bool first_stop = false;
    /// The pc alone, known without a full register read (read_pc/write_pc): a breakpoint
    /// hit needs nothing else, and a PTRACE_PEEKUSER per look costs a system call.
    std::optional<std::uint64_t> pc_cache;
    /// Forgets every cached register: the thread ran, or its registers were written.
    void forget_regs() {
        cache.reset();
        gp_cache.reset();
        pc_cache.reset();
        first_stop = false;
    }
    int pending_signal = 0;                    ///< delivered on the next resume
    std::optional<std::uint64_t> step_over_pc; ///< reported stop pc: step over a site here
    bool stepping = false;                     ///< PTRACE_SINGLESTEP in flight
    bool step_done = false;                    ///< the single-step trap arrived
    /// A reported step was stopped inside a system call: the kernel may have queued the
    /// step's SIGTRAP for the call's exit, delivered at the next resume (dropped then).
    bool stale_step_trap = false;
    bool in_syscall = false;                   ///< between syscall-entry and -exit stops
    /// The pending signal was given by the user (`signal SIG`): at a breakpoint, it is
    /// delivered before stepping over it (gdb re-reports the breakpoint after the handler).
    bool signal_first = false;
    std::optional<siginfo_t> last_siginfo;     ///< of its last signal-delivery stop
    /// Pages a software watchpoint stopped guarding since this thread last faulted there:
    /// a SIGSEGV for one of them may have been queued before the guard was lifted (the
    /// thread was stopped with the fault pending) and is stale, not the program's.
    std::set<std::uint64_t> unguarded_pages;
    /// Sent through an out-of-line slot (out_of_line.cpp): slot, site and insn length.
    std::uint64_t ool_slot = 0, ool_site = 0, ool_length = 0;
};

struct ptrace_process::impl {
    pid_t pid = 0;
    bool attached = false;
    bool job_control_stopped = false;   ///< attached in a job-control stop (state T)
    bool alive = true;
    bool running = false;         ///< resumed and not yet reported as stopped
    bool stopping_all = false;    ///< inside stop_all(): traps are expected
    /// set_early_breakpoint_reports: a lone hit of a user site is reported before stop_all.
    bool early_reports = false;
    /// set_resume_creators_early: an early thread_created report lets its creator go first.
    bool resume_creators_early = false;
    /// hold_threads: threads resume_all leaves stopped (an inferior call).
    std::vector<pid_t> held;
    /// An early report was made and stop_all has not run since: only some threads stopped.
    bool others_running = false;
    std::vector<std::unique_ptr<thread_record>> threads;   // creation order, leader first
    std::map<std::uint64_t, std::unique_ptr<breakpoint_site>> sites;
    /// Addresses whose int3 we took out (site removed, disabled or stepped over), with the
    /// program's byte there: a thread that executed that int3 just before may report its
    /// SIGTRAP only later (gdb's "moribund" breakpoint locations; is_lifted_int3_trap).
    std::map<std::uint64_t, std::byte> lifted_int3;
    breakpoint_site::id_type next_site_id = 1;
    int mem_fd = -1;
    /// Pages read while no tracee ran (resume_generation() unchanged) and nothing was
    /// written: OMPD, DMPL and the message-queue DLLs read the same runtime structures in
    /// many small pieces. Raw bytes (our int3s included; try_read_memory masks them).
    struct memory_cache {
        static constexpr std::uint64_t page = 4096;
        std::uint64_t generation = ~std::uint64_t{0};
        std::unordered_map<std::uint64_t, std::unique_ptr<std::byte[]>> pages;
        /// The private mappings ([start, end), address order) while `generation` lasts:
        /// no mapping changes while no tracee runs.
        std::optional<std::vector<std::pair<std::uint64_t, std::uint64_t>>> private_ranges;
    } mem_cache;
    /// raw_read through mem_cache (reads past a page that cannot be read whole go direct).
    std::size_t cached_read(std::uint64_t addr, std::span<std::byte> out);
    void forget_memory() { mem_cache.pages.clear(); }
    /// Forgets the cached pages that may have changed although no tracee ran: those of
    /// shared mappings (another process writes them) and of kernel-updated ones ([vvar]).
    void forget_shared_memory();
    std::deque<stop_reason> queue;          ///< collected, not yet reported (all-stop)
    std::optional<stop_reason> end;         ///< the process exited / was killed
    std::atomic<bool> interrupt_requested{false};
    bool report_forks = false;    ///< fork/vfork events are reported (catch fork)
    bool keep_fork_children = false;   ///< fork children stay traced (adopt_fork_child)
    bool keep_vfork_children = false;  ///< vfork children too (follow-fork-mode child)
    /// Our int3s are out while a vfork child shares our memory; sites added or enabled
    /// meanwhile are only recorded, and written at PTRACE_EVENT_VFORK_DONE.
    bool vfork_pending = false;
    /// This process is a vfork child (adopt_fork_child) sharing the memory of that process
    /// until it execs or exits; 0 otherwise.
    pid_t vfork_parent = 0;
    /// The thread that vfork()ed while vfork_pending (it reports VFORK_DONE).
    pid_t vfork_tid = 0;
    /// catch syscall: nullopt off (PTRACE_CONT), empty every call, else these numbers.
    std::optional<std::vector<int>> syscall_catch;

    // Shared libraries (shared_libraries.cpp).
    std::uint64_t exe_bias = 0, exe_dynamic = 0, ld_base = 0;
    std::filesystem::path exe_path, ld_path;
    std::uint64_t r_debug_addr = 0, r_brk = 0;
    std::vector<loaded_module> modules;
    elf_provider elves;           ///< empty: elf_of opens files itself (cached in own_elves)
    std::map<std::filesystem::path, std::shared_ptr<dwarf::elf_file>> own_elves;

    ~impl();

    // --- threads
    thread_record* find(pid_t tid);
    bool is_held(pid_t tid) const { return std::find(held.begin(), held.end(), tid) != held.end(); }
    thread_record& add_thread(pid_t tid, tstate st);
    void remove_thread(pid_t tid);
    thread_record* leader() { return find(pid); }

    // --- events (process_events.cpp, process_thread_status.cpp, process_forks.cpp,
    // process_resume.cpp)
    /// Decodes one waitpid result of `t` and records its meaning (LLDB's one switch).
    void handle_status(thread_record& t, const internal::wait_status& ws);
    /// waitpid(WNOHANG) on every thread that may have something to report; true if any did.
    bool poll_all();
    /// One thread's pending waitpid result, handled (poll_all's step); true if there was one.
    bool poll_thread(pid_t tid);
    void resume_creator(pid_t tid);
    /// Adds tasks of /proc/PID/task we do not know yet (clones whose event was lost to an
    /// exit_group) so that their exits can be reaped.
    void adopt_unknown_tasks();
    /// Stops every running thread (PTRACE_INTERRUPT) and collects their stops.
    void stop_all();
    /// Waits spin before they sleep (internal::wakeup_wait): the tracee leaves a core free.
    bool worth_spinning() const;
    /// stop_all() after an early report (see others_running); a no-op otherwise.
    void settle();
    /// The one queued event may be reported before stop_all: a hit of an enabled user site,
    /// a thread's creation (once the new thread has stopped) or exit.
    bool may_report_early();
    /// Pops the next reportable event (nullopt: handled internally, keep waiting).
    std::optional<stop_reason> take_report();
    std::optional<stop_reason> wait_impl(int timeout_ms);
    /// One non-blocking round of wait_impl for process_group: collects what waitpid has,
    /// and when something is to be reported stops the other threads and returns it.
    /// Never drains the wake-up pipe itself (the group does, once for all members);
    /// `activity` is set when anything happened, so the group polls again before sleeping.
    std::optional<stop_reason> poll_report(bool& activity);
    /// After take_report() dropped every queued event as stale: resumes the stopped process.
    void resume_if_everything_stale();
    void resume_all();
    /// Single-steps `t` alone (over a site at its pc); true when the step completed.
    bool single_step(thread_record& t, int signo);
    /// Before one thread's single-step (step_instruction, process_group::start_step): the
    /// process stopped and settled, `tid` a stopped thread (else "Invalid thread N."), the
    /// children held back released; returns the thread and moves its pending signal, which
    /// the step delivers, into `signo`.
    thread_record& prepare_step(pid_t tid, int& signo);
    /// A single-step of one thread whose end the waits report (process_group::start_step):
    /// the thread, and the site whose int3 came out for it (put back when the step ends).
    struct reported_step {
        pid_t tid = 0;
        std::optional<std::uint64_t> site_pc;
    };
    std::optional<reported_step> pending_step;
    /// Starts `t`'s single-step as a reported step (the other threads stay stopped).
    void start_reported_step(thread_record& t, int signo);
    /// True when `t` runs the reported step.
    bool is_reported_step(const thread_record& t) const { return pending_step && pending_step->tid == t.tid_; }
    /// Once the reported step's thread no longer steps (the step ended, or anything else
    /// stopped it, or it is gone): its site's int3 goes back.
    void end_reported_step();
    void cont(thread_record& t, int signo);
    void mark_dead(const stop_reason& why);
    /// A vfork child that execs or exits leaves the memory it shared with its parent: our
    /// int3s go out of it (through mem_fd, still opened on that memory), the parent's own
    /// come back when the parent sees PTRACE_EVENT_VFORK_DONE.
    void leave_shared_memory();
    /// A syscall-enter/exit stop of `t`: queues it when caught, resumes it otherwise.
    void handle_syscall_stop(thread_record& t);
    void reap_everything();
    /// PTRACE_EVENT_VFORK_DONE of `tid`: the memory is ours again; guards and int3s go back.
    void on_vfork_done(pid_t tid);
    /// Removes our int3s from a fork child's memory and lets it go (not followed).
    void release_fork_child(pid_t child, bool is_vfork, bool keep = false);
    /// Waits (without a limit: the kernel guarantees it) for the first stop of an
    /// auto-attached fork child; false when it ended instead.
    bool await_fork_child_stop(pid_t child);
    /// Detaches the fork children kept stopped until the parent's next resume.
    void release_deferred_children();
    void queue_event(stop_reason r) { queue.push_back(std::move(r)); }
    void require_alive() const;
    void require_stopped() const;

    // --- memory and sites (process_memory.cpp)
    void open_mem();
    std::size_t raw_read(std::uint64_t addr, std::span<std::byte> out);
    /// The bytes every software watchpoint watches now, in watches.entries' order (empty
    /// for hardware ones): what a faulting instruction or a retried call is compared with.
    std::vector<std::vector<std::byte>> software_watched_bytes();
    bool raw_write(std::uint64_t addr, std::span<const std::byte> data);
    void insert_int3(breakpoint_site& s);
    void remove_int3(breakpoint_site& s);
    /// True when a SIGTRAP whose pc is `pc` comes from an int3 of ours that is gone now.
    bool is_lifted_int3_trap(std::uint64_t pc) const;
    std::uint64_t read_pc(pid_t tid);
    void write_pc(pid_t tid, std::uint64_t pc);

    // --- watchpoints (watchpoints.cpp)
    internal::watch_state watches;
    /// Writes DR0-3/DR7 of one stopped thread from `watches` (new threads, new slots).
    void apply_debug_registers(thread_record& t);
    /// A SIGSEGV of `t` at a page a software watchpoint guards: runs the faulting
    /// instruction with the page restored, protects it again, and queues a watchpoint stop
    /// when one triggered. False when the fault is not ours (a real SIGSEGV).
    bool handle_watch_fault(thread_record& t, const siginfo_t& si);
    /// The exit stop of a system call of `t` that returned EFAULT while software
    /// watchpoints guard pages (the kernel does not fault in a guarded page, it fails the
    /// call): makes the call again with the guards lifted, other threads stopped, puts them
    /// back and queues a watchpoint stop when a watched value changed. True when `t` must
    /// stay stopped (a hit is queued, or the call is made again on its next resume because
    /// another event is being reported) or went away; false: go on as at any exit stop.
    bool retry_guarded_syscall(thread_record& t);
    /// A SIGTRAP of `t` from a debug register (DR6 says which): queues the watchpoint
    /// stop. False when no watchpoint register triggered.
    bool handle_debug_trap(thread_record& t);
    /// Address of a `syscall` instruction in the target's code, for injected system calls
    /// (found once per image; throws when there is none).
    std::uint64_t syscall_gadget();
    /// Takes every watchpoint out of the process (detach) or forgets them (exec).
    void drop_watchpoints(bool restore);
    /// Gives a fork child (sharing nothing but a copy of our page protections) the
    /// original protections back before it is let go.
    void unguard_fork_child(pid_t child);
    /// Puts the software watchpoint guards back through `tid` (stopped), after a vfork
    /// child that shared our memory (and so had them lifted) has exec'ed or exited.
    void reguard_pages(pid_t tid);
    // --- stepping over sites out of line (out_of_line.cpp)
    struct ool_site {
        internal::ool_plan plan;
        std::uint64_t slot = 0;
        std::size_t length = 0;
    };
    std::map<std::uint64_t, ool_site> ool_sites;   ///< plan per site address, decided once
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ool_pages;   ///< scratch page, bytes used
    bool ool_disabled = false;    ///< the target refused a scratch page: single-step
    process::step_over_counts counts;
    /// Moves `t`, stopped on enabled site `s`, past the instruction under it without running
    /// it in place (jump to its slot, or emulate it). False: single-step it instead.
    bool step_over_out_of_line(thread_record& t, breakpoint_site& s);
    /// After stop_all: a thread stopped inside a slot is put at the equivalent address.
    void normalise_out_of_line();
    /// Code in [addr, addr+len) changed: plans of sites there are decided again.
    void forget_out_of_line(std::uint64_t addr, std::size_t len);
    /// A slot in a scratch page below the executable; `need_near`: within rel32 of `near`.
    std::optional<std::uint64_t> alloc_slot(thread_record& t, std::uint64_t near, bool need_near);
    /// mmap(hint, length, r-x) run by stopped thread `t`; nullopt when it failed.
    std::optional<std::uint64_t> inject_mmap(thread_record& t, std::uint64_t hint, std::uint64_t length);
    /// A page right below the executable and every scratch page (out_of_line.cpp says why
    /// there), within `reach` bytes of `near` (0: anywhere); nullopt when it cannot.
    std::optional<std::uint64_t> map_scratch_page(thread_record& t, std::uint64_t near, std::uint64_t reach);
    /// Scratch pages mapped by map_scratch_page's last injected mmap and not handed out yet:
    /// [low, high), taken from the top down.
    std::uint64_t scratch_reserve_low = 0, scratch_reserve_high = 0;

    // --- jump pads (jump_pad_sites.cpp)
    struct pad_site {
        internal::jump_pad pad;
        std::vector<std::byte> original;   ///< the program's bytes under the jump
        bool armed = false;                ///< jump written, stop path on the trap
    };
    std::map<std::uint64_t, pad_site> pads;              ///< by site address
    std::vector<internal::jump_pad> retired_pads;        ///< no site uses them; kept mapped
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pad_pages;   ///< page, bytes used
    pad_site* pad_of(std::uint64_t addr);
    void arm_pad(pad_site& p);      ///< writes the jump; threads in the displaced bytes move
    void disarm_pad(pad_site& p);   ///< original bytes back; threads in the copy move back
    void retire_pad(std::uint64_t addr);
    void move_threads_into_pad(const internal::jump_pad& pad);
    void move_threads_out_of_pad(const internal::jump_pad& pad);
    bool write_stop_slot(const internal::jump_pad& pad, std::uint64_t target);
    std::optional<std::uint64_t> alloc_pad(thread_record& t, std::uint64_t near);
    /// A pad page within reach of a site in a library far from the executable.
    std::optional<std::uint64_t> map_pad_page_near_library(thread_record& t, std::uint64_t near);
    /// The site of the pad whose trap is at `trap` (live: that pad is armed).
    std::optional<std::uint64_t> pad_trap_site(std::uint64_t trap, bool& live);
    /// A SIGTRAP of `t` at `pc` (after the int3) from a pad's stop path: queues the site's
    /// breakpoint stop, or lets a disarmed pad's thread go on. False: not a pad's trap.
    bool handle_pad_trap(thread_record& t, std::uint64_t pc, int si_code);
    /// `t`, reported at armed pad site `pc`, goes on in the pad's relocated copy.
    bool step_over_pad(thread_record& t, std::uint64_t pc);
    /// A fork child gets the original bytes back under every jump.
    void restore_pads_in_child(pid_t child);
    /// After stop_all (jump_pad_stabilize.cpp): a thread stopped inside a pad or in the
    /// agent called from one is put where the program's own code would be, so that its
    /// stack and registers are the program's.
    void normalise_pads();
    bool single_step_alone(thread_record& t);
    /// Steps `t`, at `pc` in `pad`'s relocated instructions, to the program's code after them.
    void finish_relocated(thread_record& t, const internal::jump_pad& pad, std::uint64_t pc);
    /// The agent's code, [start, end) of the mapping holding the pads' evaluate function.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> agent_code;
    /// Shows the program's bytes instead of our jumps in `out` (read at `addr`).
    void mask_pads(std::uint64_t addr, std::span<std::byte> out);

    // --- shared libraries (shared_libraries.cpp)
    void init_shared_libraries();
    /// The ELF file of a module through `elves` (null when it cannot be read; never throws).
    std::shared_ptr<dwarf::elf_file> elf_of(const std::filesystem::path& path);
    /// File address of a symbol of the dynamic loader (`_dl_debug_state`, `_r_debug`).
    std::optional<std::uint64_t> loader_symbol(std::string_view name);
    /// Re-reads r_debug/link_map; true when the list of libraries changed.
    bool on_loader_breakpoint();
    bool read_link_map();
    void plant_loader_breakpoint(std::uint64_t addr);
    /// Fork children let go but not yet detached (report_forks): detached on the next
    /// resume, step, detach or kill (release_deferred_children).
    std::vector<pid_t> deferred_children;
};

}  // namespace ompdbg::tracer
