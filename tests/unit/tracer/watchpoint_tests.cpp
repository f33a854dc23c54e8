// Watchpoints in libtracer: the debug registers as the kernel holds them (read back with
// PTRACE_PEEKUSER, on threads created after the watchpoint too), software watchpoints
// triggering on the program's writes with the page protections of /proc/PID/maps restored
// afterwards, and the hardware path where the debug registers really trap.

#include "tracer_test_helpers.hpp"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstddef>

#include "ompdbg/tracer/watchpoint.hpp"

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {

long debug_register(pid_t tid, int n) {
    errno = 0;
    long v = ::ptrace(PTRACE_PEEKUSER, tid,
                      reinterpret_cast<void*>(offsetof(struct user, u_debugreg) + static_cast<std::size_t>(n) * 8),
                      nullptr);
    REQUIRE(errno == 0);
    return v;
}

/// The permissions column ("rw-p") of the mapping holding `addr`.
std::string maps_perms(pid_t pid, std::uint64_t addr) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::uint64_t lo = 0, hi = 0;
        char perms[8] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi) {
            return perms;
        }
    }
    return {};
}

/// The next stop that is not a thread being created or exiting (those are resumed over).
stop_reason wait_stop_past_threads(process& p) {
    for (;;) {
        auto r = wait_stop(p);
        if (r.kind != stop_kind::thread_created && r.kind != stop_kind::thread_exited) {
            return r;
        }
        p.resume();
    }
}

}  // namespace

TEST_CASE("hardware watchpoints program DR0-3 and DR7 on every thread, new ones too", "[tracer][watch]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_threads"), {"1"}, opts);
    std::uint64_t calls = exe_bias(*p) + nm_address(program("tracer_threads"), "calls");
    int id = p->add_watchpoint(virt_addr(calls), 4, watch_kind::write, watch_mode::hardware);
    CHECK(p->hardware_watchpoints_in_use() == 1);
    CHECK(debug_register(p->pid(), 0) == static_cast<long>(calls));
    // DR7: L0 enabled, R/W0 = 01 (write), LEN0 = 11 (4 bytes).
    CHECK((debug_register(p->pid(), 7) & 0xf0003) == 0xd0001);
    // A worker thread, created after the watchpoint, has the same registers.
    std::uint64_t hit = exe_bias(*p) + nm_address(program("tracer_threads"), "hit");
    p->add_breakpoint_site(virt_addr(hit));
    p->resume();
    auto r = wait_stop_past_threads(*p);
    if (r.kind == stop_kind::watchpoint) {
        // This machine's debug registers trap: the first write came first (hit() itself).
        CHECK(r.watchpoint_id == id);
    } else {
        REQUIRE(r.kind == stop_kind::breakpoint);
        REQUIRE(r.tid != p->pid());
        CHECK(debug_register(r.tid, 0) == static_cast<long>(calls));
        CHECK((debug_register(r.tid, 7) & 0xf0003) == 0xd0001);
    }
    // Four slots; the fifth is refused with a clear message.
    for (int i = 1; i < hardware_watch_slots; ++i) {
        p->add_watchpoint(virt_addr(calls), 1, watch_kind::access, watch_mode::hardware);
    }
    CHECK_THROWS_WITH(p->add_watchpoint(virt_addr(calls), 4, watch_kind::write, watch_mode::hardware),
                      "Hardware watchpoint slots exhausted: all 4 debug registers are in use.");
    p->remove_watchpoint(id);
    CHECK(p->hardware_watchpoints_in_use() == 3);
    CHECK((debug_register(r.tid, 7) & 0x3) == 0);   // slot 0 disabled again
    p->kill();
}

TEST_CASE("a software watchpoint stops at the write that changes the value", "[tracer][watch]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_threads"), {"2"}, opts);
    std::uint64_t calls = exe_bias(*p) + nm_address(program("tracer_threads"), "calls");
    std::string before = maps_perms(p->pid(), calls);
    REQUIRE(before.substr(0, 2) == "rw");
    int id = p->add_watchpoint(virt_addr(calls), 4, watch_kind::write, watch_mode::software);
    CHECK(maps_perms(p->pid(), calls).substr(0, 2) == "r-");   // write-protected in the target
    p->resume();
    auto r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::watchpoint);
    CHECK(r.watchpoint_id == id);
    CHECK(r.tid != p->pid());   // a worker thread, created after the watchpoint
    CHECK(p->read<int>(virt_addr(calls)) == 1);
    // The watch stays: the next change is reported too.
    p->resume();
    r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::watchpoint);
    CHECK(p->read<int>(virt_addr(calls)) == 2);
    p->remove_watchpoint(id);
    CHECK(maps_perms(p->pid(), calls) == before);
    p->resume();
    r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(out.contents() == "calls=8\n");   // 4 threads x 2 rounds: nothing lost
}

TEST_CASE("detaching restores the pages a software watchpoint guarded", "[tracer][watch]") {
    ompdbg::test::background_process bg({program("tracer_counter")});
    REQUIRE(bg.wait_for_line(std::regex(".")));
    auto p = process::attach(bg.pid());
    std::uint64_t target = exe_bias(*p) + nm_address(program("tracer_counter"), "count");
    std::string before = maps_perms(bg.pid(), target);
    p->add_watchpoint(virt_addr(target), 4, watch_kind::write, watch_mode::software);
    CHECK(maps_perms(bg.pid(), target) != before);
    p->detach();
    CHECK(maps_perms(bg.pid(), target) == before);
    // It runs on unharmed: more lines come.
    CHECK(bg.wait_for_line(std::regex("."), std::chrono::seconds(10)));
    CHECK(bg.running());
}

TEST_CASE("hardware watchpoints trap where the machine's debug registers do", "[tracer][watch]") {
    if (!hardware_watchpoints_trap()) {
        WARN("skipped: the debug registers of this machine accept writes but never trap");
        return;
    }
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_threads"), {"1"}, opts);
    std::uint64_t calls = exe_bias(*p) + nm_address(program("tracer_threads"), "calls");
    std::uint64_t hit = exe_bias(*p) + nm_address(program("tracer_threads"), "hit");
    int id = p->add_watchpoint(virt_addr(calls), 4, watch_kind::write, watch_mode::hardware);
    p->resume();
    auto r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::watchpoint);
    CHECK(r.watchpoint_id == id);
    // The thread that wrote stops right after its write, inside hit(); the four workers
    // write at about the same time, so others may have written too before all stopped.
    std::uint64_t pc = p->find_thread(r.tid)->regs().pc();
    CHECK(pc > hit);
    CHECK(pc < hit + 64);
    int n = p->read<int>(virt_addr(calls));
    CHECK(n >= 1);
    CHECK(n <= 4);
    p->kill();
}

TEST_CASE("a software watchpoint takes a range wider than a word, a debug register does not", "[tracer][watch]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_threads"), {"2"}, opts);
    std::uint64_t calls = exe_bias(*p) + nm_address(program("tracer_threads"), "calls");
    CHECK_THROWS_WITH(p->add_watchpoint(virt_addr(calls), 16, watch_kind::write, watch_mode::hardware),
                      Catch::Contains("1, 2, 4 or 8 bytes"));
    CHECK_THROWS_WITH(p->add_watchpoint(virt_addr(calls), 0, watch_kind::write, watch_mode::software),
                      Catch::Contains("1 to 65536 bytes"));
    // 32 bytes (one page) holding `calls`: its first change is reported, as one watchpoint.
    std::uint64_t start = calls & ~std::uint64_t{31};
    int id = p->add_watchpoint(virt_addr(start), 32, watch_kind::write, watch_mode::software);
    bool seen = false;
    for (int stops = 0; stops < 50 && !seen; ++stops) {
        p->resume();
        auto r = wait_stop_past_threads(*p);
        REQUIRE(r.kind == stop_kind::watchpoint);   // other statics there may change first
        CHECK(r.watchpoint_id == id);
        seen = p->read<int>(virt_addr(calls)) == 1;
    }
    CHECK(seen);
    p->remove_watchpoint(id);
    p->resume();
    auto r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(out.contents() == "calls=8\n");
}

TEST_CASE("a read(2) into a page a software watchpoint guards succeeds and is reported after the call",
          "[tracer][watch]") {
    // The kernel does not fault in a guarded page: the call fails with EFAULT, and the tracer
    // makes it again unguarded. A worker thread makes system calls all along (it stops at
    // their entry and exit while the guard is armed) and must see every one succeed.
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_syscall_watch"), {}, opts);
    std::uint64_t received = exe_bias(*p) + nm_address(program("tracer_syscall_watch"), "data");
    int id = p->add_watchpoint(virt_addr(received), 4, watch_kind::write, watch_mode::software);
    p->resume();
    auto r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::watchpoint);
    CHECK(r.watchpoint_id == id);
    CHECK(r.tid == p->pid());   // main, in read(2)
    CHECK(p->read<int>(virt_addr(received)) == 77);
    // Stopped at the instruction after the call: `syscall` (0f 05) is just before the pc.
    std::uint64_t pc = p->find_thread(r.tid)->regs().pc();
    std::byte insn[2]{};
    p->read_memory(virt_addr(pc - 2), insn);
    CHECK(insn[0] == std::byte{0x0f});
    CHECK(insn[1] == std::byte{0x05});
    // The neighbour's read(2) into the same page changes nothing watched: no stop.
    p->resume();
    r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(r.exit_code == 0);
    CHECK(out.contents() == "received 4 77\nneighbour 3 hi\nworker errors=0\n");
}

TEST_CASE("a software watchpoint removed after a system call's hit leaves the page and the calls as they were",
          "[tracer][watch]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_syscall_watch"), {}, opts);
    std::uint64_t received = exe_bias(*p) + nm_address(program("tracer_syscall_watch"), "data");
    std::string before = maps_perms(p->pid(), received);
    int id = p->add_watchpoint(virt_addr(received), 4, watch_kind::write, watch_mode::software);
    p->resume();
    auto r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::watchpoint);
    // Removed (an injected mprotect) while the worker sits at a system call's entry or exit
    // stop (PTRACE_SYSCALL while the page was guarded): every call of the worker succeeds.
    p->remove_watchpoint(id);
    CHECK(maps_perms(p->pid(), received) == before);
    p->resume();
    r = wait_stop_past_threads(*p);
    REQUIRE(r.kind == stop_kind::exited);
    CHECK(out.contents() == "received 4 77\nneighbour 3 hi\nworker errors=0\n");
}
