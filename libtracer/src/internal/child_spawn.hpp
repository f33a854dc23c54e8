#pragma once
// The process a launch starts, up to its execve: created with clone(CLONE_VM) as glibc's
// posix_spawn does, so that it shares the debugger's memory until it becomes the program.
// fork() copied the debugger's page tables (their size grows with every library's symbols
// read before `run`), the exec then tore the copy down, and each page the debugger wrote
// afterwards took a copy-on-write fault: about 80 page faults and 0.3 ms of each launch.
//
// Sharing memory constrains the child: it runs on a stack of its own, calls no library
// function (raw system calls only: a libc wrapper would set errno, which is the debugger
// thread's), writes nothing but its stack and the error pipe, and runs with every signal
// blocked and every handled signal back at its default until its execve, so that no
// debugger handler runs in it.

#include <sys/types.h>

#include <cstddef>

namespace ompdbg::tracer::internal {

/// What the child does, all of it prepared before it starts.
struct child_plan {
    int go_fd = -1;          ///< it waits for one byte here (the debugger has seized it)
    int err_fd = -1;         ///< close-on-exec: {stage, errno} when a step fails, then exit 127
    int close_fds[2] = {-1, -1};   ///< the debugger's ends of those pipes
    const char* path = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* stdin_path = nullptr;    ///< stage 1 when it cannot be opened
    const char* stdout_path = nullptr;   ///< stage 2
    bool stdout_append = false;
    int stdout_fd = -1;                  ///< or this descriptor as stdout (-1: keep ours)
    const char* stderr_path = nullptr;   ///< stage 4
    bool stderr_append = false;
    bool stderr_to_stdout = false;       ///< after stdout is set
    const char* cwd = nullptr;           ///< stage 3
    bool no_aslr = false;
};

/// The stack the child runs on: mapped by spawn_child, unmapped when this ends (after the
/// child has exec'd or died: launch waits for one or the other before it returns).
class child_stack {
public:
    child_stack() = default;
    child_stack(const child_stack&) = delete;
    child_stack& operator=(const child_stack&) = delete;
    ~child_stack();

private:
    friend pid_t spawn_child(const child_plan& plan, child_stack& stack);
    void* base_ = nullptr;
    std::size_t size_ = 0;
};

/// Starts the child of `plan` (stage 0 in err_fd: the execve failed); its pid, or -1 with
/// errno set when it could not be created.
pid_t spawn_child(const child_plan& plan, child_stack& stack);

}  // namespace ompdbg::tracer::internal
