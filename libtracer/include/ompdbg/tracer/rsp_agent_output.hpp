#pragma once
/// Where the stderr of an agent's command goes, besides being kept for the reason of its
/// end. gdb lets `target remote | CMD` write to gdb's own stderr: gdbserver's messages and
/// the output of a program it started (`gdbserver - PROG`, `run` over extended-remote, whose
/// stdout gdbserver sends to its stderr). The front end chooses the descriptor; the library
/// only copies bytes there. What the command wrote before the agent first answered (a
/// remote shell's or a missing gdbserver's complaint) is not copied: the error that ends the
/// connection names it in one line.

namespace ompdbg::tracer::rsp {

/// Agents started by spawn_command() while the scope lives copy their stderr to `fd`.
class agent_output_scope {
public:
    explicit agent_output_scope(int fd);
    ~agent_output_scope();
    agent_output_scope(const agent_output_scope&) = delete;
    agent_output_scope& operator=(const agent_output_scope&) = delete;

private:
    int previous_;
};

}  // namespace ompdbg::tracer::rsp
