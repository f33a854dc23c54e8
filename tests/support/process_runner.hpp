#pragma once
// Running real programs from tests: one-shot runs with captured output and a timeout,
// `ompdbg --batch` runs, and long-running background programs read line by line.
// Nothing here can hang: every wait has a deadline, and a child that outlives it is
// killed together with its process group.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace ompdbg::test {

using namespace std::chrono_literals;

/// How to run a program. Set fields by name, e.g.
/// `run(argv, run_options().timeout_after(5s).input("next\n"))` (gcc 12 warns about
/// designated initializers that leave fields out, hence the setters).
struct run_options {
    /// Written to the child's stdin, which is then closed (so an empty text means EOF at
    /// once).
    std::string stdin_text;
    /// Added to (or replacing in) the test's own environment, e.g. {"OMPDBG_LOG", "ptrace"}.
    std::vector<std::pair<std::string, std::string>> env;
    /// After this the child's process group is killed with SIGKILL.
    std::chrono::milliseconds timeout = 60s;
    /// Working directory of the child; empty: the test's own.
    std::string cwd;

    run_options& input(std::string text) {
        stdin_text = std::move(text);
        return *this;
    }
    run_options& set_env(std::string name, std::string value) {
        env.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    run_options& timeout_after(std::chrono::milliseconds t) {
        timeout = t;
        return *this;
    }
    run_options& in_dir(std::string dir) {
        cwd = std::move(dir);
        return *this;
    }
};

/// What a finished program did.
struct run_result {
    std::string out;       ///< everything it wrote to stdout
    std::string err;       ///< everything it wrote to stderr
    int exit_code = -1;    ///< exit status, or -1 when killed by a signal
    bool timed_out = false;///< it was killed because it ran past run_options::timeout
    int term_signal = 0;   ///< the signal that ended it (SIGKILL after a timeout), else 0

    /// True when it exited normally with status 0.
    bool ok() const { return exit_code == 0 && !timed_out && term_signal == 0; }
    /// out and err together (stdout first), for error messages in CHECKs.
    std::string all() const { return out + err; }
};

/// Runs argv (argv[0] is a path, or a name looked up in PATH) in its own process group and
/// returns its output and status. A program that cannot be started gives exit_code 127
/// and the reason on err. Never throws for anything the child does; never hangs.
run_result run(std::vector<std::string> argv, const run_options& options = {});

/// Runs `ompdbg --batch ARGS...` (the ompdbg built with the tests), e.g.
/// `ompdbg_batch({"-ex", "break main", "-ex", "run", "run", example_path("structs")})`.
run_result ompdbg_batch(std::vector<std::string> args, const run_options& options = {});

/// Runs `gdb -nx -batch ARGS...` (debuginfod off, pending breakpoints on): gdb's answer on
/// the same binary is the ground truth many tests compare with.
run_result gdb_batch(std::vector<std::string> args, const run_options& options = {});

/// The line of examples/SOURCE (e.g. "structs.c", "shlib/shapes.c") that carries the
/// comment `LINE-MARK: MARK`, so that tests never hard-code line numbers. Throws
/// std::runtime_error when there is no such mark.
int example_line(const std::string& source, const std::string& mark);
/// "SOURCE-BASENAME:LINE" of that mark, ready for `break`: example_location("structs.c",
/// "loop_body") == "structs.c:125".
std::string example_location(const std::string& source, const std::string& mark);

/// Path of an example program built by examples/CMakeLists.txt:
/// example_path("structs") is the default build (gcc, DWARF 5, -O0);
/// example_path("structs", "clang", 4, 2) is `structs-clang-dwarf4-O2`.
std::string example_path(const std::string& name);
std::string example_path(const std::string& name, const std::string& compiler, int dwarf,
                         int opt = 0);

/// The four -O0 builds of an example (gcc/clang × DWARF 4/5), for tests that must hold
/// for each, e.g. with `GENERATE(from_range(example_variants("structs")))`.
std::vector<std::string> example_variants(const std::string& name, int opt = 0);

/// A program running in the background while the test does something else (attach to it,
/// send it signals, drive it through its stdin). Owns the process: the destructor kills
/// its process group and reaps it.
class background_process {
public:
    /// Starts argv in its own process group with stdin, stdout and stderr on pipes.
    /// Throws std::runtime_error when it cannot be started.
    explicit background_process(std::vector<std::string> argv, const run_options& options = {});
    ~background_process();
    background_process(const background_process&) = delete;
    background_process& operator=(const background_process&) = delete;

    /// Its process id (also its process group id).
    pid_t pid() const { return pid_; }

    /// Waits until a complete stdout line that matches `pattern` (std::regex_search)
    /// arrives, and returns it; lines before it are consumed. std::nullopt on timeout or
    /// when stdout ends first.
    std::optional<std::string> wait_for_line(const std::regex& pattern,
                                             std::chrono::milliseconds timeout = 30s);
    /// The next complete stdout line, or std::nullopt on timeout / end of output.
    std::optional<std::string> next_line(std::chrono::milliseconds timeout = 30s);
    /// Waits until the stdout text not yet consumed (possibly a partial line, such as a
    /// prompt) matches `pattern`; returns that text and consumes it.
    std::optional<std::string> wait_for_output(const std::regex& pattern,
                                               std::chrono::milliseconds timeout = 30s);

    /// Writes to its stdin (e.g. a debugger command followed by "\n").
    void write_stdin(const std::string& text);
    /// Closes its stdin (EOF).
    void close_stdin();
    /// Sends `sig` to the process (only the process, not its group).
    void send_signal(int sig);

    /// Waits for it to exit; returns the wait status as run_result (with everything
    /// it printed since the last consumed line in `out`, and its stderr), or std::nullopt
    /// on timeout (the process is left running).
    std::optional<run_result> wait_exit(std::chrono::milliseconds timeout = 30s);
    /// True while it has not been reaped.
    bool running() const { return pid_ > 0 && !exited_; }
    /// Everything read from its stderr so far.
    const std::string& stderr_text() const { return err_; }
    /// Every stdout line consumed so far, in order.
    const std::vector<std::string>& consumed_lines() const { return consumed_; }

    /// Kills its process group with SIGKILL and reaps it (idempotent).
    void kill();

private:
    /// Reads what is available on stdout/stderr, waiting until `deadline` for at least
    /// something to happen; false when the deadline passed with nothing new.
    bool pump(std::chrono::steady_clock::time_point deadline);
    void reap(bool block);

    pid_t pid_ = -1;
    int in_fd_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool exited_ = false;
    int status_ = 0;
    std::string out_;  // stdout not yet consumed
    std::string err_;
    std::vector<std::string> consumed_;
};

}  // namespace ompdbg::test
