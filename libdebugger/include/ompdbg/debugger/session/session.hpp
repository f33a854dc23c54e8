#pragma once
/// The model of one debugging session: the program, its processes (inferiors: one, or one
/// per MPI rank) or core file, the logical breakpoints and watchpoints, the selection, the
/// settings, value history, signal and plugin policies. Front ends derive from it (the CLI's
/// app::session adds output, the command table and scripts) and hear of events through the
/// session_observer they set.

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ompdbg/debugger/breakpoints/breakpoint.hpp"
#include "ompdbg/debugger/breakpoints/watchpoint.hpp"
#include "ompdbg/debugger/mpi/mpi_job_base.hpp"
#include "ompdbg/debugger/run/signal_policy.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/plugin_trust_policy.hpp"
#include "ompdbg/debugger/session/session_observer.hpp"
#include "ompdbg/debugger/session/state_slots.hpp"
#include "ompdbg/debugger/session/user_settings.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/core_file.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/remote_process.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::debugger {

class evaluation_hooks;   // eval/evaluation_hooks.hpp

class session {
public:
    /// Starts with one empty inferior (no process) in focus, and an observer that drops
    /// every event until the front end sets its own.
    session();
    /// Ends the target (end_target) if the front end has not.
    virtual ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    /// Where the model reports events; `o` must outlive the session (or be replaced).
    void set_observer(session_observer& o) { observer_ = &o; }
    session_observer& observer() { return *observer_; }
    /// What evaluation needs of the front end (showing a stop that interrupted a function
    /// call); `h` must outlive the session (or be replaced). nullptr until set: such stops
    /// are decided and not shown.
    void set_evaluation_hooks(evaluation_hooks& h) { evaluation_hooks_ = &h; }
    evaluation_hooks* evaluation() { return evaluation_hooks_; }

    // ---- program and process ----
    /// Sets the program to run (checks that it exists and is ELF; loads its symbols) and
    /// reports symbols_read. A bare name is looked up in the current directory, then PATH.
    void set_program(const std::filesystem::path& path, std::vector<std::string> args);
    const std::optional<std::filesystem::path>& program() const { return program_; }
    /// The program as a module while no process is there to say where it is: at the
    /// addresses its last process had it (gdb keeps an objfile's relocation after the
    /// process ends, so `break`, `print &main` and `x` show run-time addresses after a run),
    /// else at its file addresses. `elf` is null when the file cannot be read.
    tracer::loaded_module static_executable();
    /// Whether a process of the program ran in this session (gdb then keeps the shared
    /// libraries' objfiles beside the program's).
    bool program_ran() const { return executable_bias_.has_value(); }
    std::vector<std::string>& program_args() { return args_; }
    /// `set confirm`, `set listsize`, `set print ...`.
    user_settings& settings() { return settings_; }
    /// The live process, or nullptr.
    tracer::process* process() { return current_inferior().process.get(); }
    /// The current target (the live process, else the core file), or nullptr.
    tracer::target* target();
    /// The core file being examined (`ompdbg core PROG CORE`, `core-file`), or nullptr.
    tracer::core_file* core() { return core_.get(); }
    /// Replaces the core file (nullptr: none); resets the thread selection.
    void set_core(std::unique_ptr<tracer::core_file> c);
    /// Throws "The program is not being run." when there is no live process.
    tracer::process& require_process();
    void set_process(std::unique_ptr<tracer::process> p);
    /// Attaches process `pid`: on this host, or on the host of the agent connected with
    /// `target extended-remote`.
    std::unique_ptr<tracer::process> attach_process(pid_t pid);
    /// The agent connection of `target remote` / `target extended-remote`, or nullptr.
    const std::shared_ptr<tracer::remote_connection>& remote() const { return remote_; }
    void set_remote(std::shared_ptr<tracer::remote_connection> c) { remote_ = std::move(c); }
    void drop_process();                    ///< after exit/kill/detach

    // ---- inferiors: several for an MPI job (one per rank), one otherwise ----
    std::vector<std::unique_ptr<inferior>>& inferiors() { return inferiors_; }
    inferior& current_inferior() { return *inferiors_[current_]; }
    std::size_t current_index() const { return current_; }
    /// Makes inferior `index` current (its process, threads, selection, sites).
    void switch_to(std::size_t index);
    /// Makes `inf`, one of inferiors(), current (the first when it is not one of them).
    void switch_to(const inferior& inf);
    /// Replaces every inferior by one per given process (an MPI job's ranks); the first
    /// becomes current and the focus is all of them.
    void set_inferiors(std::vector<std::unique_ptr<inferior>> list);
    /// The inferior of MPI rank `rank`, or nullptr.
    inferior* find_rank(int rank);
    /// Indexes of the inferiors that commands apply to (`rank 0-3,6`); never empty while
    /// there is an inferior.
    std::vector<std::size_t>& focus() { return focus_; }
    /// The MPI job (starter process and process table), or nullptr.
    mpi_job_base* job() { return job_.get(); }
    void set_job(std::unique_ptr<mpi_job_base> j);

    /// ELF files, shared by every process that maps them (key: canonical path).
    std::shared_ptr<dwarf::elf_file> elf_for(const std::filesystem::path& path);
    /// elf_for as libtracer's elf_provider: processes launched or attached by this session
    /// take their modules' ELF files from the session's cache.
    tracer::elf_provider elf_provider();

    // ---- stacks ----
    /// The stack of a thread of the current inferior (stack/stack.hpp's build_stack),
    /// cached in the inferior until the next resume.
    const std::vector<stack_frame>& stack(pid_t tid);
    /// At least the innermost `count` frames of a thread (fewer when its stack is shorter):
    /// the whole stack when it is built already, else only as far as asked. Stable until the
    /// next resume, as stack()'s.
    const std::vector<stack_frame>& innermost_frames(pid_t tid, std::size_t count = 1);
    /// Called whenever the target is resumed: drops the stacks, the hidden inline copies
    /// and the frame selection.
    void on_resume();

    // ---- selection ----
    pid_t selected_tid() const { return inferiors_[current_]->selected_tid; }
    void select_thread(pid_t tid);
    int selected_frame() const { return inferiors_[current_]->selected_frame; }
    void select_frame(int level);
    /// gdb's thread number (1, 2, ...) for a tid and back.
    int thread_number(pid_t tid) const;
    std::optional<pid_t> tid_of_thread_number(int number) const;

    // ---- breakpoints ----
    std::map<int, breakpoint>& breakpoints() { return breakpoints_; }
    std::map<int, watchpoint>& watchpoints() { return watchpoints_; }
    int next_breakpoint_number() { return ++last_breakpoint_number_; }
    /// The number given last (gdb's $bpnum); 0 before the first breakpoint.
    int last_breakpoint_number() const { return last_breakpoint_number_; }

    // ---- debugger plugins (libompd, DMPL, the MPI message-queue DLL) ----
    /// The one trust policy every plugin of this session is loaded under.
    plugin_trust_policy& plugin_policy() { return plugin_policy_; }
    /// `--plugin-path DIR` / `set plugin-path DIR`: allows plugins from DIR. Throws when DIR
    /// is empty or not a directory.
    void allow_plugin_directory(const std::string& dir);
    /// What the model's parts keep for the whole session (plugin settings, the loaded
    /// libompd, DMPL and message-queue libraries); per-process state is in each inferior's
    /// `model_state`.
    state_slots& model_state() { return model_state_; }

    // ---- signals and process events (handle, catch syscall/fork/exec, follow-fork-mode) ----
    signal_policy& signals() { return signals_; }
    process_event_settings& process_events() { return process_events_; }

    // ---- value history ($1, $2 ...) ----
    int record_value(dwarf::value v);
    std::optional<dwarf::value> history(int index) const;

    /// Number of times a program was started (run/start/attach) in this session.
    int start_count() const { return start_count_; }
    void count_start() { ++start_count_; }
    /// Ends the session's target as batch mode / quit / EOF do: kills a launched process,
    /// detaches from an attached one (the ranks first, then the job's starter).
    void end_target();

    // ---- run state shared by control/breakpoint/thread commands ----
    /// Addresses where user breakpoint sites are planted in the live process.
    std::set<std::uint64_t>& planted_sites() { return current_inferior().planted; }
    /// libthread_db for the live process (opened on first use, nullptr when unusable).
    tracer::thread_db* thread_db();
    /// gdb's "Thread 0x7ffff7d8a6c0 (LWP 1234)" / "process 1234" / "LWP 1234".
    std::string thread_target_id(pid_t tid);
    /// Assigns gdb thread numbers to threads not seen before (creation order).
    void refresh_thread_numbers();
    /// Whether the selected program has more than one thread (stop reports name it).
    bool multi_threaded() const { return inferiors_[current_]->saw_multiple_threads; }
    void note_multiple_threads() { current_inferior().saw_multiple_threads = true; }
    /// Target ids remembered per thread (a thread that exited can no longer be asked).
    std::map<pid_t, std::string>& thread_ids() { return current_inferior().thread_ids; }

private:
    session_observer* observer_;
    evaluation_hooks* evaluation_hooks_ = nullptr;
    /// Declared before the inferiors: their remote processes detach through it first.
    std::shared_ptr<tracer::remote_connection> remote_;
    std::optional<std::filesystem::path> program_;
    /// Where the program's last process had it (static_executable); reset by a new program.
    std::optional<std::uint64_t> executable_bias_;
    std::vector<std::string> args_;
    user_settings settings_;
    std::unique_ptr<tracer::core_file> core_;
    std::map<std::string, std::shared_ptr<dwarf::elf_file>> elves_;
    std::vector<std::unique_ptr<inferior>> inferiors_;
    std::size_t current_ = 0;
    std::vector<std::size_t> focus_;
    std::unique_ptr<mpi_job_base> job_;
    std::map<int, breakpoint> breakpoints_;
    std::map<int, watchpoint> watchpoints_;
    int last_breakpoint_number_ = 0;
    std::vector<dwarf::value> history_;
    int start_count_ = 0;
    signal_policy signals_;
    process_event_settings process_events_;
    plugin_trust_policy plugin_policy_;
    /// Last: destroyed first, while everything its objects might name still exists.
    state_slots model_state_;
};

}  // namespace ompdbg::debugger
