// The event loop around the edges: fork and vfork children, exec, a signal that arrives
// while attached, a main thread that exits before the others, thread names.

#include "tracer_test_helpers.hpp"

#include <csignal>
#include <regex>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;
using namespace std::chrono_literals;

TEST_CASE("fork and posix_spawn children run free of our breakpoints", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_fork"), {}, opts);
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_fork"), "tick"));
    p->add_breakpoint_site(tick);
    // Once libc is there, also break on execve, which the posix_spawn child calls while it
    // still shares the parent's memory (vfork).
    bool planted_execve = false;
    int parent_hits = 0;
    for (;;) {
        p->resume();
        auto r = wait_stop(*p, 20000, true);
        if (r.kind == stop_kind::library_event) {
            for (auto& m : p->modules()) {
                if (!planted_execve && m.path.filename().string().rfind("libc.so", 0) == 0) {
                    p->add_breakpoint_site(virt_addr(m.load_bias + nm_address(m.path, "execve", true)));
                    planted_execve = true;
                }
            }
            continue;
        }
        if (r.kind == stop_kind::exited) {
            CHECK(r.exit_code == 0);
            break;
        }
        if (r.kind == stop_kind::signal) {
            // The parent gets SIGCHLD when a child ends (gdb: nostop noprint pass).
            CHECK(r.signo == SIGCHLD);
            continue;
        }
        REQUIRE(r.kind == stop_kind::breakpoint);
        CHECK(r.tid == p->pid());
        CHECK(*r.breakpoint_addr == tick);
        ++parent_hits;
    }
    CHECK(planted_execve);
    CHECK(parent_hits == 2);
    CHECK(out.contents() ==
          "child ticks=4\nfork child status=0\nspawned\nspawn child status=0\nparent ticks=2\n");
}

TEST_CASE("an exec is reported and the new program can be debugged", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch("/bin/sh", {"-c", "exec " + program("tracer_calls") + " 2"}, opts);
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::exec);
    CHECK(r.tid == p->pid());
    CHECK(std::filesystem::equivalent(p->modules().front().path, program("tracer_calls")));
    CHECK(std::filesystem::equivalent(p->executable(), program("tracer_calls")));
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    p->add_breakpoint_site(tick);
    int hits = 0;
    for (;;) {
        p->resume();
        r = wait_stop(*p);
        if (r.kind != stop_kind::breakpoint) break;
        ++hits;
    }
    CHECK(r.kind == stop_kind::exited);
    CHECK(r.exit_code == 7);
    CHECK(hits == 2);
    CHECK(out.contents() == "calls=2 marker=0x1122334455667788\n");
}

TEST_CASE("a signal that arrives while attached is delivered after detach", "[tracer]") {
    ompdbg::test::background_process prog({program("tracer_sigcount")});
    REQUIRE(prog.wait_for_line(std::regex("^count 2$"), 10s));
    {
        auto p = process::attach(prog.pid());
        p->resume();
        ::kill(prog.pid(), SIGUSR1);
        auto r = wait_stop(*p, 5000);
        REQUIRE(r.kind == stop_kind::signal);
        CHECK(r.signo == SIGUSR1);
        CHECK(p->pending_signal(r.tid) == SIGUSR1);
        p->detach();   // hands SIGUSR1 over with PTRACE_DETACH
    }
    auto line = prog.wait_for_line(std::regex("^usr1 "), 10s);
    REQUIRE(line);
    CHECK(*line == "usr1 1");
    // And the count goes on, each number once.
    auto next = prog.next_line(10s);
    REQUIRE(next);
    std::smatch m;
    REQUIRE(std::regex_match(*next, m, std::regex("^count (\\d+)$")));
    long n = std::stol(m[1]);
    for (int i = 1; i <= 5; ++i) {
        auto l = prog.next_line(10s);
        REQUIRE(l);
        CHECK(*l == "count " + std::to_string(n + i));
    }
}

TEST_CASE("a main thread that exits before the others does not hang the debugger", "[tracer]") {
    auto p = process::launch(program("tracer_leader_exit"), {}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::thread_created);
    pid_t worker = r.new_tid;
    p->resume();
    CHECK(keeps_running(*p, 200));   // the leader's pthread_exit is not an event
    p->interrupt();
    r = wait_stop(*p, 5000);
    CHECK(r.kind == stop_kind::interrupted);
    REQUIRE(p->find_thread(worker));
    CHECK(p->find_thread(worker)->state() == thread_state::stopped);
    CHECK(p->find_thread(worker)->regs().pc() != 0);
    p->resume();
    CHECK(keeps_running(*p, 50));
    p->kill();
    CHECK_FALSE(p->is_alive());
}

TEST_CASE("thread names come from the kernel (pthread_setname_np)", "[tracer]") {
    auto p = process::launch(program("tracer_threads"), {"1"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    CHECK(p->threads().front()->name() == "tracer_threads");
    virt_addr hit(exe_bias(*p) + nm_address(program("tracer_threads"), "hit"));
    p->add_breakpoint_site(hit);
    for (;;) {
        p->resume();
        auto r = wait_stop(*p);
        if (r.kind == stop_kind::breakpoint) {
            CHECK(std::regex_match(p->find_thread(r.tid)->name(), std::regex("worker-[0-3]")));
            break;
        }
        REQUIRE(r.kind == stop_kind::thread_created);
    }
    p->kill();
}

TEST_CASE("a kept vfork child hits its breakpoints in the shared memory, and the parent gets its own back after",
          "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_vfork_ticks"), {}, opts);
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_vfork_ticks"), "tick"));
    p->add_breakpoint_site(tick);
    p->set_keep_fork_children(true, true);
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::fork);
    REQUIRE(r.is_vfork);
    auto child = p->adopt_fork_child(r.new_tid, true);
    // The memory is the child's now: the parent's int3 is out of it.
    std::byte at_tick{};
    child->read_memory(tick, std::span(&at_tick, 1));
    CHECK(at_tick != std::byte{0xcc});
    child->add_breakpoint_site(tick);
    int child_hits = 0;
    for (;;) {
        child->resume();
        auto c = wait_stop(*child);
        if (c.kind != stop_kind::breakpoint) {
            REQUIRE(c.kind == stop_kind::exited);
            CHECK(c.exit_code == 3);
            break;
        }
        CHECK(c.tid == r.new_tid);
        ++child_hits;
    }
    CHECK(child_hits == 2);
    // The child is gone: its int3 went out of the shared memory with it, and the parent's
    // comes back at its VFORK_DONE.
    p->finish_vfork();
    p->resume();
    // The parent gets SIGCHLD when the child ends (gdb: nostop noprint pass).
    for (r = wait_stop(*p); r.kind == stop_kind::signal && r.signo == SIGCHLD; r = wait_stop(*p)) {
        p->resume();
    }
    REQUIRE(r.kind == stop_kind::breakpoint);
    CHECK(r.tid == p->pid());
    CHECK(*r.breakpoint_addr == tick);
    p->resume();
    for (r = wait_stop(*p); r.kind == stop_kind::signal && r.signo == SIGCHLD; r = wait_stop(*p)) {
        p->resume();
    }
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(out.contents() == "status=3 ticks=3\n");
}
