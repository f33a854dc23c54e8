// process: launch, exit, exec errors, attach/detach, kill, SIGKILL from outside, interrupt.

#include "tracer_test_helpers.hpp"

#include "ompdbg/tracer/proc_fs.hpp"

#include <ctime>
#include <csignal>
#include <regex>

#include <sys/wait.h>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;
using namespace std::chrono_literals;

TEST_CASE("process::launch runs a program to its exit and reports the exit code", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_calls"), {"3"}, opts);
    CHECK(p->is_alive());
    CHECK_FALSE(p->is_attached());
    REQUIRE(p->threads().size() == 1);
    CHECK(p->threads().front()->tid() == p->pid());
    p->resume();
    auto r = wait_stop(*p);
    CHECK(r.kind == stop_kind::exited);
    CHECK(r.exit_code == 7);
    CHECK_FALSE(p->is_alive());
    CHECK(out.contents() == "calls=3 marker=0x1122334455667788\n");
}

TEST_CASE("process::launch reports a missing program as '<path>: No such file or directory'", "[tracer]") {
    CHECK_THROWS_WITH(process::launch("/nonexistent/program", {}), "/nonexistent/program: No such file or directory");
}

TEST_CASE("process::launch passes arguments and environment, and stops at the exec", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    opts.env = {"OMPDBG_TEST_VALUE=hello there"};
    auto p = process::launch("/bin/sh", {"-c", "echo \"$0 $OMPDBG_TEST_VALUE\"; exit 3"}, opts);
    // Stopped at the exec: /proc says the tracee is in a tracing stop.
    auto stat = ompdbg::test::run({"cat", "/proc/" + std::to_string(p->pid()) + "/stat"});
    CHECK(stat.out.find(") t ") != std::string::npos);
    p->resume();
    auto r = wait_stop(*p);
    CHECK(r.kind == stop_kind::exited);
    CHECK(r.exit_code == 3);
    CHECK(out.contents() == "/bin/sh hello there\n");
}

TEST_CASE("process::attach rejects a pid that does not exist", "[tracer]") {
    CHECK_THROWS_WITH(process::attach(999999), "ptrace: No such process.");
}

TEST_CASE("process::attach rejects a process that is already traced", "[tracer]") {
    launch_options quiet;
    quiet.stdout_path = "/dev/null";
    auto traced = process::launch(program("tracer_calls"), {}, quiet);
    CHECK_THROWS_WITH(process::attach(traced->pid()), "ptrace: Operation not permitted.");
    // The first tracer still owns it and can run it to the end.
    traced->resume();
    auto r = wait_stop(*traced);
    CHECK(r.kind == stop_kind::exited);
}

TEST_CASE("attaching to a running program and detaching leaves its output sequence unbroken", "[tracer]") {
    ompdbg::test::background_process prog({program("tracer_counter")});
    auto first = prog.wait_for_line(std::regex("^count 3$"), 10s);
    REQUIRE(first);
    std::uint64_t count_addr = nm_address(program("tracer_counter"), "count");
    {
        auto p = process::attach(prog.pid());
        CHECK(p->is_attached());
        REQUIRE(!p->threads().empty());
        CHECK(p->threads().front()->tid() == prog.pid());
        for (auto* t : p->threads()) {
            CHECK(t->state() == thread_state::stopped);
        }
        // /proc agrees that we are its tracer and that it is stopped.
        auto status = ompdbg::test::run({"grep", "-E", "^(TracerPid|State)", "/proc/" + std::to_string(prog.pid()) + "/status"});
        CHECK(status.out.find("TracerPid:\t" + std::to_string(::getpid())) != std::string::npos);
        CHECK(status.out.find("tracing stop") != std::string::npos);
        long count = p->read<long>(virt_addr(exe_bias(*p) + count_addr));
        CHECK(count >= 3);
        // Let it run a little while attached, stop it again, then detach.
        p->resume();
        CHECK(keeps_running(*p, 100));
        p->interrupt();
        auto r = wait_stop(*p, 5000);
        CHECK(r.kind == stop_kind::interrupted);
        p->detach();
        CHECK_FALSE(p->is_alive());
    }
    auto status = ompdbg::test::run({"grep", "TracerPid", "/proc/" + std::to_string(prog.pid()) + "/status"});
    CHECK(status.out == "TracerPid:\t0\n");
    // The sequence goes on: every number once, in order.
    long expect = 4;
    for (int i = 0; i < 40; ++i) {
        auto line = prog.next_line(10s);
        REQUIRE(line);
        CHECK(*line == "count " + std::to_string(expect));
        ++expect;
    }
}

TEST_CASE("wait_for_stop with a timeout returns nothing while the program runs, and interrupt() stops it", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_counter"), {}, opts);
    p->resume();
    auto start = std::chrono::steady_clock::now();
    CHECK(keeps_running(*p, 200));
    CHECK(std::chrono::steady_clock::now() - start >= 190ms);
    p->interrupt();
    auto r = wait_stop(*p, 5000);
    CHECK(r.kind == stop_kind::interrupted);
    for (auto* t : p->threads()) {
        CHECK(t->state() == thread_state::stopped);
    }
    // Stopped means stopped: the output does not grow.
    auto before = out.contents();
    CHECK_THROWS_WITH(p->wait_for_stop(100), "The program is not running.");
    auto after = out.contents();
    CHECK(before == after);
    // And it runs on when resumed.
    p->resume();
    CHECK(keeps_running(*p, 150));
    p->kill();
    CHECK_FALSE(p->is_alive());
    CHECK(out.contents().size() > after.size());
}

TEST_CASE("a target killed with SIGKILL from outside while stopped reports terminated", "[tracer]") {
    auto p = process::launch(program("tracer_counter"), {}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    p->resume();
    CHECK(keeps_running(*p, 50));
    p->interrupt();
    REQUIRE(wait_stop(*p).kind == stop_kind::interrupted);
    ::kill(p->pid(), SIGKILL);
    p->resume();
    auto r = wait_stop(*p, 5000);
    CHECK(r.kind == stop_kind::terminated);
    CHECK(r.signo == SIGKILL);
    CHECK_FALSE(p->is_alive());
    CHECK_THROWS_WITH(p->resume(), "The program is not being run.");
}

TEST_CASE("a target killed with SIGKILL from outside while running reports terminated", "[tracer]") {
    auto p = process::launch(program("tracer_threads"), {"100000"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    p->resume();
    // Let its threads start, then kill it from outside while it runs.
    int created = 0;
    while (created < 4) {
        auto r = wait_stop(*p);
        REQUIRE(r.kind == stop_kind::thread_created);
        ++created;
        p->resume();
    }
    ::kill(p->pid(), SIGKILL);
    auto r = wait_stop(*p, 5000);
    CHECK(r.kind == stop_kind::terminated);
    CHECK(r.signo == SIGKILL);
    CHECK_FALSE(p->is_alive());
}

TEST_CASE("process::kill ends a launched process and the destructor leaves no child behind", "[tracer]") {
    pid_t pid;
    {
        auto p = process::launch(program("tracer_counter"), {}, [] {
            launch_options o;
            o.stdout_path = "/dev/null";
            return o;
        }());
        pid = p->pid();
        p->resume();
        CHECK(keeps_running(*p, 50));
    }
    // Reaped: no such process any more (not even a zombie).
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
}

TEST_CASE("signals are reported with their fault address and delivered on resume", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_signals"), {}, opts);
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::signal);
    CHECK(r.signo == SIGUSR1);
    CHECK(p->pending_signal(r.tid) == SIGUSR1);
    p->resume();   // delivered: the handler prints "usr1"
    r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::signal);
    CHECK(r.signo == SIGSEGV);
    REQUIRE(r.fault_addr);
    CHECK(r.fault_addr->addr() == 0);
    p->resume();   // SIGSEGV delivered: the program dies of it
    r = wait_stop(*p);
    CHECK(r.kind == stop_kind::terminated);
    CHECK(r.signo == SIGSEGV);
    CHECK(out.contents() == "usr1\n");
}

TEST_CASE("signal_queued sees a signal sent to the process and not yet taken, and not once it is", "[tracer]") {
    // A blocked signal stays in the queue as a SIGSTOP does until its task runs again.
    sigset_t usr2, old;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    REQUIRE(::pthread_sigmask(SIG_BLOCK, &usr2, &old) == 0);
    pid_t self = ::getpid();
    pid_t tid = static_cast<pid_t>(::gettid());
    CHECK_FALSE(proc_fs::signal_queued(self, tid, SIGUSR2));
    REQUIRE(::kill(self, SIGUSR2) == 0);
    CHECK(proc_fs::signal_queued(self, tid, SIGUSR2));
    CHECK_FALSE(proc_fs::signal_queued(self, tid, SIGUSR1));
    timespec none{0, 0};
    CHECK(::sigtimedwait(&usr2, nullptr, &none) == SIGUSR2);
    CHECK_FALSE(proc_fs::signal_queued(self, tid, SIGUSR2));
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    CHECK_FALSE(proc_fs::signal_queued(0x7ffffff0, 0x7ffffff0, SIGSTOP));
}

TEST_CASE("read_thread_stat gives a thread's state letter and CPU time, nothing for a gone thread", "[tracer]") {
    // This test's own thread runs and has used CPU time: it spins until its own CPU clock
    // says 50 ms (5 of the kernel's 10 ms ticks). A fixed count of iterations was not enough:
    // each ctest runs one case in a new process, and 50 million took 14 ms here (0 ticks).
    pid_t self = ::getpid();
    auto thread_cpu_ms = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1'000'000L;
    };
    volatile unsigned long spin = 0;
    while (thread_cpu_ms() < 50) {
        for (unsigned long i = 0; i < 1'000'000UL; ++i) {
            spin = spin + i;
        }
    }
    auto st = proc_fs::read_thread_stat(self, self);
    CHECK(st.state == 'R');
    REQUIRE(st.cpu_ticks);
    CHECK(*st.cpu_ticks > 0);
    CHECK(proc_fs::thread_state_letter(self, self) == 'R');
    auto gone = proc_fs::read_thread_stat(self, 0x7ffffff0);
    CHECK(gone.state == 0);
    CHECK_FALSE(gone.cpu_ticks);
}
