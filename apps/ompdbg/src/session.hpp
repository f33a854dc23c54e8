#pragma once
/// One debugging session: the program, the live process (or core), the logical
/// breakpoints, the selected thread and frame, and the command table. Owned by main();
/// commands receive it. Only apps/ prints, through `out()`.

#include <sys/types.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.hpp"
#include "output.hpp"
#include "script_state.hpp"
#include "ompdbg/debugger/run/signal_policy.hpp"
#include "ompdbg/debugger/session/state_slots.hpp"
#include "stack.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg/tracer/core_file.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/remote_process.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/thread_db.hpp"

namespace ompdbg::app {

/// The model's names (libdebugger, ompdbg::debugger) as the commands knew them before the
/// model became a library: the one place the app imports them.
using namespace ompdbg::debugger;

/// Where command lines come from: the terminal, a -x file, the -ex list. A command that
/// reads a body (`commands` ... `end`) reads it from the same source as itself.
class line_source {
public:
    virtual ~line_source() = default;
    /// The next line without its newline; nullopt at end of input. Interactive sources
    /// show `prompt` first.
    virtual std::optional<std::string> next_line(std::string_view prompt) = 0;
    /// True for a terminal (questions are asked instead of auto-answered).
    virtual bool is_interactive() const { return false; }
    /// "FILE:LINE" of the line read last, for a file (gdb's "FILE:LINE: Error in sourced
    /// command file:"); empty for the terminal and -ex lines.
    virtual std::string where() const { return {}; }
};

/// One resolved address of a logical breakpoint.
struct breakpoint_location {
    virt_addr address;
    std::string function;          ///< the function's name: "main", "ns::foo"
    /// gdb's name of that function's symbol, as `info breakpoints` shows it: "main" in C,
    /// "ns::foo(int)" in C++ (function_print_name); the ELF symbol without DWARF.
    std::string symbol;
    std::string file;
    int line = 0;
    bool enabled = true;
    /// Where the address came from, to re-resolve after launch / library load.
    std::string module_path;
    std::uint64_t file_address = 0;
};

/// A user breakpoint (gdb's numbered breakpoint): a spec, its locations, condition,
/// hit count, commands. Pending while no location is found (shared library not loaded).
struct breakpoint {
    int number = 0;
    std::string spec;              ///< as typed: "foo", "file.c:12", "*0x401000"
    bool temporary = false;        ///< tbreak
    bool enabled = true;
    bool pending = false;
    std::string condition;         ///< empty: none
    int hit_count = 0;
    int ignore_count = 0;
    std::optional<pid_t> thread_tid;     ///< `break ... thread N` (not parsed yet)
    /// MPI ranks it is planted in (the focus when it was set, as TotalView and DDT do);
    /// empty: every rank.
    std::vector<int> ranks;
    /// Whether it applies to MPI rank `rank` (-1: a process that is not a rank).
    bool applies_to_rank(int rank) const {
        return ranks.empty() || rank < 0 || std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
    }
    std::vector<std::string> commands;   ///< `commands N` ... `end` (may hold silent, continue)
    /// `dprintf`: a hit runs `commands` (its one `printf`) in the hitting thread and goes on,
    /// never a stop.
    bool dprintf = false;
    std::vector<breakpoint_location> locations;
    /// Catchpoints (`catch omp parallel-begin`): what is caught, and the text reported on a
    /// hit instead of the frame line (empty function: an ordinary breakpoint).
    std::string catch_what;
    std::function<std::string(session&, pid_t)> describe_hit;
    /// Catchpoints whose condition names the event's fields (`catch omp parallel-begin if
    /// team_size != 8`) evaluate it here instead of in the frame; may throw like a condition.
    std::function<bool(session&, pid_t, const std::string&)> test_condition;
};

class mpi_job;   // commands_mpi.hpp

/// One debugged process and what the session knows about it: the only program, or one
/// rank of an MPI job. The session's per-process accessors (process(), selected_tid(),
/// stack(), thread numbers, planted sites, thread_db...) act on the current inferior.
struct inferior {
    std::unique_ptr<tracer::process> process;
    int rank = -1;                      ///< MPI rank; -1 for a program that is not a rank
    std::string host;                   ///< MPIR host name (ranks)
    /// A rank of another host that could not be reached (its agent, its pid): why. It has
    /// no process and `mpi ranks` shows it `lost`.
    std::string lost;
    std::filesystem::path executable;   ///< MPIR executable name (ranks)
    pid_t pid = 0;                      ///< kept after the process ended
    /// How the process ended (exit code / signal), once it did; it stays listed.
    std::optional<tracer::stop_reason> end;
    pid_t selected_tid = 0;
    int selected_frame = 0;
    std::map<pid_t, std::vector<stack_frame>> stacks;
    std::map<pid_t, int> thread_numbers;
    int last_thread_number = 0;
    std::deque<std::pair<pid_t, std::uint64_t>> pending_hits;
    std::set<std::uint64_t> planted;
    std::unique_ptr<tracer::thread_db> thread_db;
    bool thread_db_tried = false;
    bool saw_multiple_threads = false;
    std::map<pid_t, std::string> thread_ids;
    /// A vfork followed into the child (follow-fork-mode child): the child shares the
    /// parent's memory, and the parent is held, until the child execs or exits. The pids
    /// of the other side (0: none), as gdb's "is vfork parent/child of inferior N".
    pid_t vfork_parent_pid = 0;
    pid_t vfork_child_pid = 0;
    bool detach_after_vfork = false;   ///< the parent: detached then (detach-on-fork on)
    /// What the model's parts keep about this process (its OMPD address space, DMPL view,
    /// message-queue view, fast-breakpoint agent): dropped when the process is, before it.
    state_slots model_state;

    ~inferior();
};

/// A data watchpoint (`watch`, `rwatch`, `awatch`), numbered with the breakpoints
/// (commands_watch.cpp).
struct watchpoint {
    int number = 0;
    std::string expression;            ///< as shown: "counter", "-location counter"
    tracer::watch_kind kind = tracer::watch_kind::write;
    tracer::watch_mode mode = tracer::watch_mode::software;
    dwarf::value value;                ///< the watched lvalue (type and address)
    std::vector<std::byte> old_bytes;  ///< the value last reported
    int tracer_id = 0;                 ///< process::add_watchpoint's id (0: not armed)
    /// A computed expression (`watch a + b`): the memory its value is read from, watched
    /// piece by piece (empty for an lvalue), and the ids of the pieces after the first.
    std::vector<std::pair<std::uint64_t, std::size_t>> chain;
    std::vector<int> chain_ids;
    int hit_count = 0;
    bool enabled = true;               ///< `disable N`: kept, but not armed in the process
    /// A watchpoint on a frame's locals ends with the frame: the return address it is
    /// planted at and the frame's CFA (0: global, never ends).
    std::uint64_t scope_pc = 0;
    std::uint64_t scope_cfa = 0;
    pid_t scope_tid = 0;
};

/// gdb's user settings that change what ompdbg does (`set confirm`, `set listsize`,
/// `set print elements|repeats|pretty`), and the ones gdb scripts set that ompdbg honours by
/// construction (it neither pages nor wraps: `set pagination`, `set width`, `set height`).
struct user_settings {
    bool confirm = true;
    int listsize = 10;
    dwarf::format_options print;   ///< letter stays natural; print/FMT overrides it per command
    bool pagination = true;
    std::optional<unsigned> width, height;   ///< nullopt: unlimited
    std::string args_text;   ///< the program's arguments as last written (`show args` repeats them)
    std::optional<bool> breakpoint_pending;   ///< `set breakpoint pending on|off|auto` (nullopt: auto, ask)
    std::optional<bool> breakpoint_fast;      ///< `set breakpoint fast on|off` (nullopt: OMPDBG_FAST_BREAKPOINTS, on)
    bool may_call_functions = true;   ///< `set may-call-functions`
    bool unwind_on_signal = false;    ///< `set unwindonsignal`: restore a signalled call's caller
    std::string remote_shell;                 ///< `set remote-shell` (empty: OMPDBG_RSH or ssh; remote_ranks.hpp)
    std::vector<std::string> local_hosts;     ///< `set mpi-local-hosts`: more names of this machine
    std::string remote_exec_file;             ///< `set remote exec-file`: what `run` over extended-remote
                                              ///< starts on the agent's host (empty: the program's path)
};

class session {
public:
    /// `out`/`err`: where the session's output goes (`ompdbg triage` gathers through a
    /// session that writes to /dev/null and prints its own report).
    session(bool json, bool batch, std::FILE* out = stdout, std::FILE* err = stderr);
    ~session();

    output& out() { return out_; }
    bool is_batch() const { return batch_; }
    command_table& commands() { return commands_; }

    // ---- program and process ----
    /// Sets the program to run (checks that it exists and is ELF; loads its symbols).
    void set_program(const std::filesystem::path& path, std::vector<std::string> args);
    const std::optional<std::filesystem::path>& program() const { return program_; }
    std::vector<std::string>& program_args() { return args_; }
    /// `set confirm`, `set listsize`, `set print ...` (commands_settings.cpp).
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
    /// `target extended-remote` (commands_remote.cpp).
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
    /// Replaces every inferior by one per given process (an MPI job's ranks); the first
    /// becomes current and the focus is all of them.
    void set_inferiors(std::vector<std::unique_ptr<inferior>> list);
    /// The inferior of MPI rank `rank`, or nullptr.
    inferior* find_rank(int rank);
    /// Indexes of the inferiors that commands apply to (`rank 0-3,6`); never empty while
    /// there is an inferior.
    std::vector<std::size_t>& focus() { return focus_; }
    /// The MPI job (starter process and process table), or nullptr.
    mpi_job* job() { return job_.get(); }
    void set_job(std::unique_ptr<mpi_job> j);

    /// ELF files, shared by every process that maps them (key: canonical path).
    std::shared_ptr<dwarf::elf_file> elf_for(const std::filesystem::path& path);
    /// elf_for as libtracer's elf_provider: processes launched or attached by this session
    /// take their modules' ELF files from the session's cache.
    tracer::elf_provider elf_provider();

    // ---- selection ----
    pid_t selected_tid() const { return inferiors_[current_]->selected_tid; }
    void select_thread(pid_t tid);
    int selected_frame() const { return inferiors_[current_]->selected_frame; }
    void select_frame(int level);
    /// The stack of a thread (cached until the next resume).
    const std::vector<stack_frame>& stack(pid_t tid);
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
    plugins::plugin_policy& plugin_policy() { return plugin_policy_; }
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

    // ---- execution ----
    /// Executes one command line; returns false when it failed (message already printed).
    /// With `propagate_errors` (the lines of a script body) a failure is not printed but
    /// rethrown, so that it ends the whole user command or sourced file, as in gdb.
    bool execute(std::string_view line, bool propagate_errors = false);
    /// Called by run/continue/step... after the target stopped: updates selection, reports
    /// the stop as gdb does, runs breakpoint commands.
    void on_stop(const tracer::stop_reason& why);
    /// Called whenever the target is resumed: drops caches (stacks, registers).
    void on_resume();
    bool quit_requested() const { return quit_; }
    void request_quit() { quit_ = true; }

    // ---- command sources (batch, -x, -ex, stdin) ----
    /// Executes every line of `src` until it ends or `quit`; returns false when a command
    /// failed (`stop_on_error`: stop at the first failure, as gdb does in -x files).
    bool run_source(line_source& src, bool stop_on_error);
    /// Reads one more line from the source of the running command (`commands` bodies);
    /// nullopt at end of input.
    std::optional<std::string> read_body_line(std::string_view prompt);
    /// Makes `src` the source that commands read their bodies from (script bodies run by
    /// command_block.cpp), until pop_source.
    void push_source(line_source& src) { sources_.push_back(&src); }
    void pop_source() { sources_.pop_back(); }
    /// The innermost source: where the running command came from (nullptr: none).
    line_source* current_source() { return sources_.empty() ? nullptr : sources_.back(); }
    /// gdb's command language: user commands, loops, the call depth (commands_script.cpp).
    script_state& script() { return script_; }
    /// The command lines that failed, in order (batch mode names them on stderr).
    const std::vector<std::string>& failed_commands() const { return failed_; }
    /// Asks a yes/no question as gdb's query() "(y or n)": answered Y when input is not a
    /// terminal. With `default_no`, gdb's nquery() "(y or [n])", where an empty answer is
    /// no (ompdbg still answers Y when input is not a terminal: pending breakpoints).
    bool query(const std::string& question, bool default_no = false);
    /// Number of times a program was started (run/start/attach) in this session.
    int start_count() const { return start_count_; }
    void count_start() { ++start_count_; }
    /// Ends the session's target as batch mode / quit / EOF do: kills a launched process,
    /// detaches from an attached one.
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

    /// Set while a breakpoint's `commands` run: `continue` then only asks the stop loop to
    /// resume (no recursion, however many times the breakpoint is hit).
    struct command_state {
        bool in_breakpoint_commands = false;
        bool resume_requested = false;
    };
    command_state& bp_commands_state() { return bp_state_; }

private:
    output out_;
    bool batch_;
    /// Declared before the inferiors: their remote processes detach through it first.
    std::shared_ptr<tracer::remote_connection> remote_;
    command_table commands_;
    std::optional<std::filesystem::path> program_;
    std::vector<std::string> args_;
    user_settings settings_;
    std::unique_ptr<tracer::core_file> core_;
    std::map<std::string, std::shared_ptr<dwarf::elf_file>> elves_;
    std::vector<std::unique_ptr<inferior>> inferiors_;
    std::size_t current_ = 0;
    std::vector<std::size_t> focus_;
    std::unique_ptr<mpi_job> job_;
    std::map<int, breakpoint> breakpoints_;
    std::map<int, watchpoint> watchpoints_;
    int last_breakpoint_number_ = 0;
    std::vector<dwarf::value> history_;
    bool quit_ = false;
    std::vector<line_source*> sources_;
    std::vector<std::string> failed_;
    std::string last_repeatable_;
    int start_count_ = 0;
    command_state bp_state_;
    script_state script_;
    signal_policy signals_;
    process_event_settings process_events_;
    plugins::plugin_policy plugin_policy_;
    /// Last: destroyed first, while everything its objects might name still exists.
    state_slots model_state_;
};

/// Registration of command groups (each in its own commands_*.cpp).
void register_control_commands(command_table& t);     ///< run, continue, next, step, finish, until, stepi, nexti, kill, detach, quit, attach
void register_breakpoint_commands(command_table& t);  ///< break, tbreak, delete, disable, enable, condition, commands, info breakpoints
void register_thread_commands(command_table& t);      ///< info threads, thread N, thread apply
void register_stack_commands(command_table& t);       ///< bt, frame, up, down, info frame, info locals, info args
void register_data_commands(command_table& t);        ///< print, ptype, whatis, set var, x, info registers, info sharedlibrary, display
void register_misc_commands(command_table& t);        ///< help, echo, shell-free basics
void register_settings_commands(command_table& t);    ///< set/show confirm, listsize, args, print ..., show version
void register_prompt_commands(command_table& t);      ///< file
void register_watch_commands(command_table& t);       ///< watch, rwatch, awatch, info watchpoints
void register_dump_commands(command_table& t);        ///< dump/append [binary] memory|value
void register_core_commands(command_table& t);        ///< core-file (core)
void register_remote_commands(command_table& t);      ///< target remote|extended-remote, disconnect, monitor
void register_signal_commands(command_table& t);      ///< handle, info signals, signal, catch syscall/fork/vfork/exec, follow-fork-mode
void register_symbol_commands(command_table& t);      ///< info functions, info variables, info types, info sources
void register_info_line_command(command_table& t);    ///< info line
void register_script_commands(command_table& t);      ///< define, document, source, if, while, end
void register_shell_commands(command_table& t);       ///< shell, !


}  // namespace ompdbg::app
