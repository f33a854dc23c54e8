// remote_process through the real gdbserver on a simulated host (tests/cluster/): the same
// `process` interface as a local process: threads, registers, memory, modules, the
// backtrace, a breakpoint hit, detach (the program counts on without a gap). The ground
// truth is nm, the program's own output, and the local ptrace process.

#include "tracer_test_helpers.hpp"

#include <regex>

#include "cluster.hpp"
#include "ompdbg/tracer/remote_process.hpp"
#include "ompdbg/tracer/unwinder.hpp"

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;
using namespace ompdbg::test;

TEST_CASE("remote_process attaches through gdbserver on another host and reads, stops and lets go like a local one",
          "[tracer][remote]") {
    simulated_cluster cluster({"node1"});
    cluster.export_environment();
    background_process prog(cluster.on_host("node1", {program("tracer_counter")}), cluster.options());
    auto first = prog.next_line(30s);
    REQUIRE(first);
    pid_t pid = std::stoi(*first);
    REQUIRE(prog.wait_for_line(std::regex("^count 2$"), 30s));

    auto conn = remote_connection::open("| " + cluster.rsh() + " node1 gdbserver --multi -", true, 20000);
    CHECK(conn->client().supported().multiprocess);
    CHECK(conn->describe() == "extended-remote | " + cluster.rsh() + " node1 gdbserver --multi -");
    auto p = remote_process::attach(conn, pid);
    CHECK(p->pid() == pid);
    CHECK(p->is_alive());
    CHECK(p->executable() == program("tracer_counter"));
    CHECK(p->connection() == conn->describe());

    // One thread, the main one, named like the program; its pc inside libc (nanosleep).
    auto threads = p->threads();
    REQUIRE(threads.size() == 1);
    CHECK(threads[0]->tid() == pid);
    CHECK(threads[0]->name() == "tracer_counter");
    auto pc = threads[0]->regs().pc();
    CHECK(pc != 0);
    CHECK(threads[0]->regs().sp() != 0);

    // Modules: the executable (read here: same build-id) and libc, with their biases.
    auto& mods = p->modules();
    REQUIRE(mods.size() >= 2);
    CHECK(mods[0].is_executable);
    REQUIRE(mods[0].elf);
    bool has_libc = false;
    for (auto& m : mods) {
        has_libc = has_libc || m.path.filename().string().starts_with("libc.so");
    }
    CHECK(has_libc);
    REQUIRE(p->module_at(virt_addr(pc)));
    CHECK(p->vdso_range());

    // Memory: `count`, by its nm address, equals what the program printed last.
    virt_addr count(exe_bias(*p) + nm_address(program("tracer_counter"), "count"));
    long printed = -1;
    for (auto& l : prog.consumed_lines()) {
        if (l.starts_with("count ")) {
            printed = std::stol(l.substr(6));
        }
    }
    auto value = p->read<long>(count);
    CHECK(value >= printed);   // it printed more lines than were read here before the attach

    // The stack unwinds through libc into main, from the remote registers and memory.
    auto frames = backtrace(*p, pid, 32);
    bool reaches_main = false;
    virt_addr main_addr(exe_bias(*p) + nm_address(program("tracer_counter"), "main"));
    for (auto& f : frames) {
        reaches_main = reaches_main || (f.pc.addr() >= main_addr.addr() && f.pc.addr() < main_addr.addr() + 0x200);
    }
    CHECK(reaches_main);

    // A breakpoint site is planted through the agent and taken out again.
    auto& site = p->add_breakpoint_site(main_addr, false);
    CHECK(site.is_enabled());
    CHECK(p->find_breakpoint_site(main_addr) == &site);
    p->remove_breakpoint_site(main_addr);
    CHECK(p->find_breakpoint_site(main_addr) == nullptr);

    // Write and read back: the program prints the value we wrote.
    long target_value = value + 1000;
    p->write_memory(count, std::as_bytes(std::span(&target_value, 1)));
    CHECK(p->read<long>(count) == target_value);

    // Ctrl-C equivalent: interrupt a running remote process.
    p->resume();
    auto resumed = prog.wait_for_line(std::regex("^count " + std::to_string(target_value + 1) + "$"), 10s);
    INFO("the program printed " << prog.consumed_lines().size() << " lines, the last: " << (prog.consumed_lines().empty() ? std::string() : prog.consumed_lines().back()));
    REQUIRE(resumed);
    p->interrupt();
    auto why = wait_stop(*p);
    CHECK(why.kind == stop_kind::interrupted);

    p->detach();
    CHECK_FALSE(p->is_alive());
    // Detached: it counts on from where it was.
    REQUIRE(prog.wait_for_line(std::regex("^count " + std::to_string(target_value + 4) + "$"), 30s));
}

TEST_CASE("remote_process reports a breakpoint hit at the site's address, in the thread that hit it",
          "[tracer][remote]") {
    simulated_cluster cluster({"node1"});
    cluster.export_environment();
    background_process prog(cluster.on_host("node1", {program("tracer_counter")}), cluster.options());
    auto first = prog.next_line(30s);
    REQUIRE(first);
    pid_t pid = std::stoi(*first);
    REQUIRE(prog.wait_for_line(std::regex("^count 1$"), 30s));
    auto conn = remote_connection::open("| " + cluster.rsh() + " node1 gdbserver --multi -", true, 20000);
    auto p = remote_process::attach(conn, pid);
    // nanosleep is called once per line: a site on it in libc is hit again.
    std::uint64_t target = 0;
    for (auto& m : p->modules()) {
        if (m.path.filename().string().starts_with("libc.so") && m.elf) {
            if (auto v = defined_symbol_value(*m.elf, "nanosleep")) {
                target = m.load_bias + *v;
            }
        }
    }
    REQUIRE(target != 0);
    p->add_breakpoint_site(virt_addr(target), false);
    p->resume();
    auto why = wait_stop(*p);
    CHECK(why.kind == stop_kind::breakpoint);
    REQUIRE(why.breakpoint_addr);
    CHECK(why.breakpoint_addr->addr() == target);
    CHECK(why.tid == pid);
    CHECK(p->find_thread(pid)->regs().pc() == target);
    // Reads show the program's own bytes, never the agent's int3.
    std::byte b{};
    p->read_memory(virt_addr(target), std::span(&b, 1));
    CHECK(b != std::byte{0xcc});
    // Over the breakpoint again (the agent steps over it), and once more to the next hit.
    p->resume();
    CHECK(wait_stop(*p).kind == stop_kind::breakpoint);
    p->remove_breakpoint_site(virt_addr(target));
    p->detach();
    auto before = prog.consumed_lines().size();
    REQUIRE(prog.next_line(30s));
    CHECK(prog.consumed_lines().size() > before);
}

TEST_CASE("remote_connection refuses a pid that does not exist on its host in one line naming host and pid, and "
          "stops one process of the agent while another of it runs",
          "[tracer][remote]") {
    simulated_cluster cluster({"node1"});
    cluster.export_environment();
    background_process a(cluster.on_host("node1", {program("tracer_counter")}), cluster.options());
    background_process b(cluster.on_host("node1", {program("tracer_counter")}), cluster.options());
    auto a_line = a.next_line(30s);
    auto b_line = b.next_line(30s);
    REQUIRE(a_line);
    REQUIRE(b_line);
    pid_t a_pid = std::stoi(*a_line), b_pid = std::stoi(*b_line);
    REQUIRE(a.wait_for_line(std::regex("^count 1$"), 30s));
    REQUIRE(b.wait_for_line(std::regex("^count 1$"), 30s));

    // A pid that no process of node1 has (ground truth: node1's own /proc).
    pid_t missing = 4000000;
    auto probe = run({cluster.rsh(), "node1", "test ! -e /proc/" + std::to_string(missing)}, cluster.options());
    REQUIRE(probe.ok());
    auto conn = remote_connection::open("| " + cluster.rsh() + " node1 gdbserver --multi -", true, 20000);
    CHECK_THROWS_WITH(remote_process::attach(conn, missing),
                      "Cannot attach to process 4000000 on host node1: no such process.");
    CHECK_FALSE(conn->is_lost());

    // The same agent goes on: both counters attached, `a` runs while `b` stays stopped and
    // is read meanwhile, then `a` alone is stopped (a non-stop agent: vCont;t for `a`).
    auto pa = remote_process::attach(conn, a_pid);
    auto pb = remote_process::attach(conn, b_pid);
    virt_addr count_b(exe_bias(*pb) + nm_address(program("tracer_counter"), "count"));
    long b_before = pb->read<long>(count_b);
    pa->resume();
    CHECK_FALSE(pa->wait_for_stop(100));   // a wait sends the resumes batched meanwhile
    REQUIRE(a.wait_for_line(std::regex("^count [0-9]+$"), 30s));   // `a` prints: it runs
    pb->forget_cached_memory();
    CHECK(pb->read<long>(count_b) == b_before);   // `b` did not run meanwhile
    CHECK(pb->threads().size() == 1);
    pa->interrupt();
    auto why = pa->wait_for_stop();
    CHECK(why.kind == stop_kind::interrupted);
    CHECK(pa->find_thread(a_pid)->regs().pc() != 0);
    pa->detach();
    pb->detach();
    REQUIRE(b.wait_for_line(std::regex("^count [0-9]+$"), 30s));   // `b` runs on detached
}
