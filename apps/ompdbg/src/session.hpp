#pragma once
/// One debugging session: the program, the live process (or core), the logical
/// breakpoints, the selected thread and frame, and the command table. Owned by main();
/// commands receive it. Only apps/ prints, through `out()`.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.hpp"
#include "output.hpp"
#include "stack.hpp"
#include "ompdbg/dwarf/elf_file.hpp"
#include "ompdbg/dwarf/value.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::app {

/// One resolved address of a logical breakpoint.
struct breakpoint_location {
    virt_addr address;
    std::string function;          ///< "main", "ns::foo(int)"
    std::string file;
    int line = 0;
    bool enabled = true;
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
    std::vector<std::string> commands;   ///< `commands N` ... `end` (may hold silent, continue)
    std::vector<breakpoint_location> locations;
};

class session {
public:
    session(bool json, bool batch);
    ~session();

    output& out() { return out_; }
    bool is_batch() const { return batch_; }
    command_table& commands() { return commands_; }

    // ---- program and process ----
    /// Sets the program to run (checks that it exists and is ELF; loads its symbols).
    void set_program(const std::filesystem::path& path, std::vector<std::string> args);
    const std::optional<std::filesystem::path>& program() const { return program_; }
    std::vector<std::string>& program_args() { return args_; }
    /// The live process, or nullptr.
    tracer::process* process() { return process_.get(); }
    /// The current target (live process or core), or nullptr.
    tracer::target* target();
    /// Throws "The program is not being run." when there is no live process.
    tracer::process& require_process();
    void set_process(std::unique_ptr<tracer::process> p);
    void drop_process();                    ///< after exit/kill/detach

    /// ELF files, shared by every process that maps them (key: canonical path).
    std::shared_ptr<dwarf::elf_file> elf_for(const std::filesystem::path& path);

    // ---- selection ----
    pid_t selected_tid() const { return selected_tid_; }
    void select_thread(pid_t tid);
    int selected_frame() const { return selected_frame_; }
    void select_frame(int level);
    /// The stack of a thread (cached until the next resume).
    const std::vector<stack_frame>& stack(pid_t tid);
    /// gdb's thread number (1, 2, ...) for a tid and back.
    int thread_number(pid_t tid) const;
    std::optional<pid_t> tid_of_thread_number(int number) const;

    // ---- breakpoints ----
    std::map<int, breakpoint>& breakpoints() { return breakpoints_; }
    int next_breakpoint_number() { return ++last_breakpoint_number_; }

    // ---- value history ($1, $2 ...) ----
    int record_value(dwarf::value v);
    std::optional<dwarf::value> history(int index) const;

    // ---- execution ----
    /// Executes one command line; returns false when it failed (message already printed).
    bool execute(std::string_view line);
    /// Called by run/continue/step... after the target stopped: updates selection, reports
    /// the stop as gdb does, runs breakpoint commands.
    void on_stop(const tracer::stop_reason& why);
    /// Called whenever the target is resumed: drops caches (stacks, registers).
    void on_resume();
    bool quit_requested() const { return quit_; }
    void request_quit() { quit_ = true; }

private:
    output out_;
    bool batch_;
    command_table commands_;
    std::optional<std::filesystem::path> program_;
    std::vector<std::string> args_;
    std::unique_ptr<tracer::process> process_;
    std::map<std::string, std::shared_ptr<dwarf::elf_file>> elves_;
    pid_t selected_tid_ = 0;
    int selected_frame_ = 0;
    std::map<pid_t, std::vector<stack_frame>> stacks_;
    std::map<pid_t, int> thread_numbers_;
    int last_thread_number_ = 0;
    std::map<int, breakpoint> breakpoints_;
    int last_breakpoint_number_ = 0;
    std::vector<dwarf::value> history_;
    bool quit_ = false;
};

/// Registration of command groups (each in its own commands_*.cpp).
void register_control_commands(command_table& t);     ///< run, continue, next, step, finish, until, stepi, nexti, kill, detach, quit, attach
void register_breakpoint_commands(command_table& t);  ///< break, tbreak, delete, disable, enable, condition, commands, info breakpoints
void register_thread_commands(command_table& t);      ///< info threads, thread N, thread apply
void register_stack_commands(command_table& t);       ///< bt, frame, up, down, info frame, info locals, info args
void register_data_commands(command_table& t);        ///< print, ptype, whatis, set var, x, info registers, info sharedlibrary, display

}  // namespace ompdbg::app
