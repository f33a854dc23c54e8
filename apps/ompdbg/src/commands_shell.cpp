// `shell CMD` and `!CMD`: run a command through the user's shell, as gdb does, with its
// output in order with ours and its exit status in $_shell_exitcode / $_shell_exitsignal.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "command_args.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

/// gdb's get_shell(): $SHELL, else /bin/sh.
std::string user_shell() {
    const char* sh = std::getenv("SHELL");
    return sh != nullptr && *sh != '\0' ? sh : "/bin/sh";
}

/// gdb's exit_status_set_internal_vars: one of the two variables holds the status, the
/// other is void.
void set_exit_variables(session& s, int status) {
    set_convenience_variable(s, "_shell_exitcode", std::nullopt);
    set_convenience_variable(s, "_shell_exitsignal", std::nullopt);
    if (WIFEXITED(status)) {
        set_convenience_variable(s, "_shell_exitcode", int_value(WEXITSTATUS(status)));
    } else if (WIFSIGNALED(status)) {
        set_convenience_variable(s, "_shell_exitsignal", int_value(WTERMSIG(status)));
    }
}

void cmd_shell(session& s, std::string_view args) {
    std::string command = trim_copy(args);
    std::string shell = user_shell();
    // What we printed so far comes first on the terminal (or in the file we write to).
    s.out().flush();
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t child = ::fork();
    if (child < 0) {
        error::send_errno("Cannot fork");
    }
    if (child == 0) {
        if (s.out().is_json()) {
            ::dup2(STDERR_FILENO, STDOUT_FILENO);   // stdout carries only JSON objects
        }
        if (command.empty()) {
            ::execl(shell.c_str(), shell.c_str(), static_cast<char*>(nullptr));
        } else {
            ::execl(shell.c_str(), shell.c_str(), "-c", command.c_str(), static_cast<char*>(nullptr));
        }
        std::fprintf(stderr, "Cannot execute %s: %s\n", shell.c_str(), std::strerror(errno));
        std::fflush(stderr);
        ::_exit(127);
    }
    int status = 0;
    // Only this child: the tracer's waitpid(-1) never runs while we wait here.
    while (::waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            error::send_errno("waitpid");
        }
    }
    set_exit_variables(s, status);
    if (WIFEXITED(status)) {
        s.out().field("exit_code", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        s.out().field("exit_signal", WTERMSIG(status));
    }
}

}  // namespace

void register_shell_commands(command_table& t) {
    t.add({"shell", {"!"}, "Execute the rest of the line as a shell command.",
           "shell [COMMAND]\n!COMMAND\nWith no arguments, runs an inferior shell. The exit status is in "
           "$_shell_exitcode,\nor the signal that ended it in $_shell_exitsignal.",
           cmd_shell, false, nullptr});
}

}  // namespace ompdbg::app
