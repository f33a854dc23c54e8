#pragma once
/// How the model tells its front end what happens: the model calls, the front end renders
/// (text, JSON, DAP events). The model never waits for an answer and never prints.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace ompdbg::debugger {

/// Implemented by each front end (the CLI's in apps/ompdbg/src/cli_observer.hpp). Every
/// call returns at once; what the front end does with it (print, queue an event, drop it)
/// is its own business. The default of each is to drop the event.
class session_observer {
public:
    virtual ~session_observer() = default;
    /// The program's symbols were read (`file`, `run PROG`): gdb prints "Reading symbols
    /// from PROG..." and, without DWARF, "(No debugging symbols found in PROG)".
    virtual void symbols_read(const std::filesystem::path& program, bool has_debug_info) {
        (void)program;
        (void)has_debug_info;
    }
    /// Something the user should know that is not an error (the operation went on).
    virtual void warning(std::string_view text) { (void)text; }
    /// A warning while an expression is evaluated, which goes on (gdb prints "warning:
    /// TEXT" on its error stream).
    virtual void expression_warning(std::string_view text) { (void)text; }
    /// A file of another host is about to be fetched through its agent (`host_path` as
    /// `host` names it): gdb prints "Reading PATH from remote target...".
    virtual void remote_file_fetch(const std::string& host, const std::filesystem::path& host_path) {
        (void)host;
        (void)host_path;
    }
    /// Fast breakpoints (breakpoints/fast_breakpoints.hpp) go without ompdbg's agent in the
    /// target, for reason `why` ("the agent is missing", ...): conditions are evaluated by
    /// the debugger at each stop.
    virtual void agent_unused(std::string_view why) { (void)why; }
    /// The agent `agent` was loaded (dlopen) into the attached process `pid`.
    virtual void agent_loaded(const std::filesystem::path& agent, pid_t pid) {
        (void)agent;
        (void)pid;
    }
    /// Whole lines the program printed through the agent (dprintf lines it formatted),
    /// in order, at most 4096 bytes: the front end writes them in one write of their own,
    /// after what it has buffered, so that the program's output never lands inside a line.
    virtual void target_lines(std::string_view text) { (void)text; }
};

}  // namespace ompdbg::debugger
