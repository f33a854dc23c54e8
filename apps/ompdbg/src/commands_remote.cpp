// gdb's remote-target commands: target remote | target extended-remote (a remote shell
// command after `|`, or HOST:PORT), disconnect, monitor. The agent is gdbserver; the
// processes it serves are libtracer remote processes behind the same `process` interface
// as local ones, so every other command works on them unchanged.
#include <unistd.h>

#include <fmt/format.h>

#include "command_args.hpp"
#include "commands_inferiors.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "stop_printer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/tracer/remote_process.hpp"
#include "ompdbg/tracer/rsp_agent_output.hpp"

namespace ompdbg::app {

namespace {

/// "`native'", "`exec'", "`None'": what gdb names the target in its refusals.
std::string target_name(session& s) {
    if (s.process() && s.process()->is_alive()) {
        return s.process()->connection() == "native" ? "native" : "remote";
    }
    return s.program() ? "exec" : "None";
}

void connect(session& s, std::string_view args, bool extended) {
    std::string spec = trim_copy(args);
    if (s.process() && s.process()->is_alive()) {
        error::send("A program is being debugged already.  Detach or kill it first (\"detach\", \"kill\").");
    }
    // As gdb, the agent's command writes to our stderr once it answered (gdbserver's
    // messages, the output of a program it started).
    tracer::rsp::agent_output_scope output(STDERR_FILENO);
    auto conn = tracer::remote_connection::open(spec, extended);
    if (!s.is_batch()) {
        s.out().line(fmt::format("Remote debugging using {}", spec));
    }
    s.set_remote(conn);
    announce_remote_files(s, *conn);
    s.out().field("connection", conn->describe());
    if (extended) {
        // A `gdbserver --multi` still holding a process (one left to it by `disconnect`) gives
        // it back, as gdb does; otherwise `attach PID` (or `run`) picks the process.
        if (auto held = tracer::remote_process::held(conn, s.elf_provider())) {
            take_attached_process(s, std::move(held));
        }
        return;
    }
    // target remote: the agent holds its process already (gdbserver PROG / --attach PID).
    auto proc = tracer::remote_process::current(conn, s.elf_provider());
    take_attached_process(s, std::move(proc));
}

void cmd_disconnect(session& s, std::string_view) {
    if (!s.remote()) {
        error::send(fmt::format("You can't do that when your target is `{}'", target_name(s)));
    }
    // The processes stay with the agent (gdbserver detaches them when its connection ends).
    for (auto& inf : s.inferiors()) {
        if (inf->process) {
            inf->process->disconnect();
        }
    }
    if (s.process()) {
        s.drop_process();
    }
    s.set_remote(nullptr);
}

void cmd_monitor(session& s, std::string_view args) {
    if (!s.remote()) {
        error::send("\"monitor\" command not supported by this target.");
    }
    std::string text = s.remote()->monitor(trim_copy(args));
    s.out().field("output", text);
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    if (!text.empty()) {
        s.out().line(text);
    }
}

}  // namespace

void register_remote_commands(command_table& t) {
    auto& target = t.prefix("target", {}, "Connect to a target machine or process.");
    target.add({"remote", {}, "Use a remote computer via a serial line, using a gdb-specific protocol.",
                "target remote | COMMAND\ntarget remote HOST:PORT\n"
                "Debugs the process a gdbserver agent holds. `| COMMAND` runs COMMAND (e.g. `ssh -T node1 "
                "gdbserver - --attach PID`) and speaks to the agent over its stdin/stdout.",
                [](session& s, std::string_view a) { connect(s, a, false); }, false, nullptr});
    target.add({"extended-remote", {}, "Use a remote computer via a serial line, using a gdb-specific protocol.",
                "target extended-remote | COMMAND\ntarget extended-remote HOST:PORT\n"
                "Connects to a gdbserver --multi agent (e.g. `| ssh -T node1 gdbserver --multi -`); then "
                "`attach PID` debugs process PID of that host.",
                [](session& s, std::string_view a) { connect(s, a, true); }, false, nullptr});
    t.add({"disconnect", {}, "Disconnect from a target.",
           "disconnect\nCloses the connection to the remote agent without detaching or killing the process; "
           "gdbserver then lets go of it.",
           cmd_disconnect, false, nullptr});
    t.add({"monitor", {}, "Send a command to the remote monitor (remote targets only).",
           "monitor COMMAND\nRuns COMMAND in the gdbserver agent (`monitor help` lists them) and shows its output.",
           cmd_monitor, false, nullptr});
}

}  // namespace ompdbg::app
