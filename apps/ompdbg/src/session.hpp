#pragma once
/// The CLI's debugging session: the model's session (libdebugger: program, processes,
/// breakpoints, selection, settings) plus what is the command line's own: output, the
/// command table, where command lines come from, scripts, failed commands, the batch flag.
/// Owned by main(); commands receive it. Only apps/ prints, through `out()`.

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

#include "cli_observer.hpp"
#include "command_table.hpp"
#include "output.hpp"
#include "script_state.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/value.hpp"
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

class cli_eval_hooks;   // cli_eval_hooks.hpp

/// The CLI's session: the model's session plus the command line's own state. Commands take
/// it (`(session&, args)`); model code takes the base, `debugger::session&`.
class session : public debugger::session {
public:
    /// `out`/`err`: where the session's output goes (`ompdbg triage` gathers through a
    /// session that writes to /dev/null and prints its own report).
    session(bool json, bool batch, std::FILE* out = stdout, std::FILE* err = stderr);
    ~session() override;

    output& out() { return out_; }
    bool is_batch() const { return batch_; }
    command_table& commands() { return commands_; }

    /// The MPI job (starter, MPIR interface, proctable, MPI2DD), or nullptr: the model's
    /// job_of (ompdbg/debugger/mpi/mpi_job.hpp).
    mpi_job* job();

    // ---- execution ----
    /// Executes one command line; returns false when it failed (message already printed).
    /// With `propagate_errors` (the lines of a script body) a failure is not printed but
    /// rethrown, so that it ends the whole user command or sourced file, as in gdb.
    bool execute(std::string_view line, bool propagate_errors = false);
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

    /// Set while a breakpoint's `commands` run: `continue` then only asks the stop loop to
    /// resume (no recursion, however many times the breakpoint is hit).
    struct command_state {
        bool in_breakpoint_commands = false;
        bool resume_requested = false;
    };
    command_state& bp_commands_state() { return bp_state_; }

    /// The source file of the last frame's source line shown, and whether it could not be
    /// read: gdb says "No such file or directory." once, then "N\tin FILE" while the lines
    /// shown stay in that file (source.c's last_source_visited / last_source_error).
    struct source_visit {
        std::string file;
        bool missing = false;
    };
    source_visit& last_source() { return last_source_; }

private:
    output out_;
    bool batch_;
    /// Renders the model's events on `out_`; set as the model's observer.
    cli_observer observer_;
    /// Runs the model's function calls and threadprivate lookups; set as its evaluation hooks.
    std::unique_ptr<cli_eval_hooks> eval_hooks_;
    command_table commands_;
    bool quit_ = false;
    std::vector<line_source*> sources_;
    std::vector<std::string> failed_;
    std::string last_repeatable_;
    command_state bp_state_;
    source_visit last_source_;
    script_state script_;
};

/// Registration of command groups (each in its own commands_*.cpp).
void register_control_commands(command_table& t);     ///< run, continue, next, step, finish, until, stepi, nexti, kill, detach, quit, attach
void register_breakpoint_commands(command_table& t);  ///< break, tbreak, delete, disable, enable, condition, commands, info breakpoints
void register_thread_commands(command_table& t);      ///< info threads, thread N, thread apply
void register_stack_commands(command_table& t);       ///< bt, frame, up, down, info frame, info locals, info args
void register_data_commands(command_table& t);        ///< print, ptype, whatis, set var, x, info registers, info sharedlibrary, display
void register_misc_commands(command_table& t);        ///< help, echo, shell-free basics
void register_settings_commands(command_table& t);    ///< set/show confirm, listsize, args, print ..., show version
void register_index_cache_commands(command_table& t); ///< set/show index-cache (called by register_settings_commands)
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
