// A task attached between its fork and its execve, as a debugger attaching to srun may find
// one (srun publishes a task's pid in MPIR_proctable once slurmstepd has forked it):
// mpir::run_until_task_executed runs it to its exec. The task here is a fork of this test
// that waits for a byte on a pipe before it executes tracer_calls (exit code 7).

#include "tracer_test_helpers.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/proc_fs.hpp"
#include "run_to_symbol.hpp"

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {

/// A child of this process that reads one byte from a pipe, then executes `path` (or
/// exits with 3 when `path` is empty); on end of file it exits with 0 without executing.
class forked_task {
public:
    explicit forked_task(const std::string& path) {
        REQUIRE(::pipe(fd_) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            // Only async-signal-safe calls from here on.
            ::close(fd_[1]);
            char c = 0;
            if (::read(fd_[0], &c, 1) != 1) {
                ::_exit(0);
            }
            if (path.empty()) {
                ::_exit(3);
            }
            int null = ::open("/dev/null", O_WRONLY);   // its output is no part of the test's
            ::dup2(null, 1);
            char* const argv[] = {const_cast<char*>(path.c_str()), nullptr};
            ::execv(path.c_str(), argv);
            ::_exit(127);
        }
        ::close(fd_[0]);
    }
    ~forked_task() {
        if (fd_[1] >= 0) {
            ::close(fd_[1]);   // a task still waiting exits
        }
        if (pid_ > 0 && !reaped_) {
            int st = 0;
            ::waitpid(pid_, &st, 0);
        }
    }
    forked_task(const forked_task&) = delete;
    forked_task& operator=(const forked_task&) = delete;

    pid_t pid() const { return pid_; }
    void go() { REQUIRE(::write(fd_[1], "g", 1) == 1); }
    /// The task's exit code once it has ended (it runs untraced by then).
    int exit_code() {
        close_pipe();
        int st = 0;
        REQUIRE(::waitpid(pid_, &st, 0) == pid_);
        reaped_ = true;
        REQUIRE(WIFEXITED(st));
        return WEXITSTATUS(st);
    }

private:
    void close_pipe() {
        if (fd_[1] >= 0) {
            ::close(fd_[1]);
            fd_[1] = -1;
        }
    }
    int fd_[2] = {-1, -1};
    pid_t pid_ = -1;
    bool reaped_ = false;
};

}  // namespace

TEST_CASE("MPIR: a task attached before it executed its program is run to its exec, then it is the program",
          "[tracer][mpi]") {
    std::string prog = program("tracer_calls");
    forked_task task(prog);
    auto p = process::attach(task.pid());
    // Still this test's image: a fork that has not executed tracer_calls.
    CHECK(mpir::forked_not_executed(task.pid(), prog));
    task.go();   // it reads the byte only when it runs again
    REQUIRE(mpir::run_until_task_executed(*p, prog, std::chrono::seconds(60)));
    CHECK_FALSE(mpir::forked_not_executed(task.pid(), prog));
    CHECK(std::filesystem::equivalent(p->executable(), prog));
    CHECK(p->is_alive());
    // Stopped where the exec left it: memory of the new image reads.
    CHECK(proc_fs::read_maps(task.pid()).size() > 0);
    p->detach();
    CHECK(task.exit_code() == 7);   // tracer_calls ran to its end, untouched
}

TEST_CASE("MPIR: a task that has executed its program already is left as it is", "[tracer][mpi]") {
    std::string prog = program("tracer_calls");
    launch_options quiet;
    quiet.stdout_path = "/dev/null";
    auto p = process::launch(prog, {}, quiet);
    CHECK_FALSE(mpir::forked_not_executed(p->pid(), prog));
    CHECK(mpir::run_until_task_executed(*p, prog, std::chrono::seconds(60)));
    std::optional<stop_reason> why;
    do {   // the loader's library events on the way
        p->resume();
        why = p->wait_for_stop(60000);
        REQUIRE(why);
    } while (why->kind == stop_kind::library_event);
    CHECK(why->kind == stop_kind::exited);
    CHECK(why->exit_code == 7);
}

TEST_CASE("MPIR: a task that does not execute its program within the limit is left stopped, and detach lets it go",
          "[tracer][mpi]") {
    std::string prog = program("tracer_calls");
    forked_task task(prog);
    auto p = process::attach(task.pid());
    CHECK_FALSE(mpir::run_until_task_executed(*p, prog, std::chrono::milliseconds(200)));
    CHECK(p->is_alive());
    CHECK(mpir::forked_not_executed(task.pid(), prog));
    p->detach();
    CHECK(task.exit_code() == 0);   // end of file on its pipe: it never executed
}

TEST_CASE("MPIR: a task that exits before it executes its program is an error naming it", "[tracer][mpi]") {
    std::string prog = program("tracer_calls");
    forked_task task("");
    auto p = process::attach(task.pid());
    task.go();
    CHECK_THROWS_WITH(mpir::run_until_task_executed(*p, prog, std::chrono::seconds(60)),
                      "process " + std::to_string(task.pid()) + " exited with code 03 before executing " + prog + ".");
}

TEST_CASE("MPIR: an entry with its pid but not yet its executable name is no started task (srun writes the names last)",
          "[tracer][mpi]") {
    std::string prog = program("tracer_mpir_table");
    auto p = process::launch(prog, {});
    ompdbg::test::run_to_symbol(*p, prog, "names_pending");
    auto iface = mpir::interface::find(*p);
    REQUIRE(iface);
    auto before = iface->progress(*p);
    CHECK(before.size == 3);
    CHECK(before.with_pid == 0);
    CHECK_FALSE(before.complete());
    ompdbg::test::run_to_symbol(*p, prog, "names_set");
    auto after = iface->progress(*p);
    CHECK(after.with_pid == 3);
    CHECK(after.complete());
    auto table = iface->proctable(*p);
    REQUIRE(table.size() == 3);
    CHECK(table[2].executable_name == "/bin/true");
    CHECK(table[2].host_name == "node");
    CHECK(table[2].pid == 1002);
}
