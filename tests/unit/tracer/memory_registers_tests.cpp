// Memory reads and writes (int3 bytes hidden) and registers.

#include "tracer_test_helpers.hpp"

#include <array>
#include <cstring>

#include <fcntl.h>
#include <sys/ptrace.h>

#include <fmt/format.h>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {
// What is really in the tracee's memory, int3s included (ground truth from the kernel).
std::byte raw_byte(pid_t pid, std::uint64_t addr) {
    int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    std::byte b{};
    REQUIRE(::pread(fd, &b, 1, static_cast<off_t>(addr)) == 1);
    ::close(fd);
    return b;
}
}  // namespace

TEST_CASE("memory reads and writes round-trip, and the program sees the write", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_calls"), {"1"}, opts);
    virt_addr marker(exe_bias(*p) + nm_address(program("tracer_calls"), "marker"));
    CHECK(p->read<std::uint64_t>(marker) == 0x1122334455667788ULL);
    std::uint64_t v = 0xdeadbeefcafef00dULL;
    p->write_memory(marker, std::as_bytes(std::span(&v, 1)));
    CHECK(p->read<std::uint64_t>(marker) == v);
    p->resume();
    CHECK(wait_stop(*p).kind == stop_kind::exited);
    CHECK(out.contents() == "calls=1 marker=0xdeadbeefcafef00d\n");
}

TEST_CASE("memory reads hide planted int3 bytes and writes over a site update its saved byte", "[tracer]") {
    auto p = process::launch(program("tracer_calls"), {"1"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    std::array<std::byte, 16> before{}, after{};
    p->read_memory(tick - 4, before);
    auto& site = p->add_breakpoint_site(tick);
    CHECK(raw_byte(p->pid(), tick.addr()) == std::byte{0xcc});   // really patched
    p->read_memory(tick - 4, after);
    CHECK(before == after);                                      // but not visible
    CHECK(site.saved_byte() == before[4]);
    // Writing over the site keeps the int3 and changes the byte restored later.
    std::byte nop{0x90};
    p->write_memory(tick, std::span(&nop, 1));
    CHECK(raw_byte(p->pid(), tick.addr()) == std::byte{0xcc});
    CHECK(p->read<std::uint8_t>(tick) == 0x90);
    p->write_memory(tick, std::span(&before[4], 1));
    p->disable_site(tick);
    CHECK(raw_byte(p->pid(), tick.addr()) == before[4]);
}

TEST_CASE("reading unmapped memory fails with gdb's message, try_read_memory reads up to the hole", "[tracer]") {
    launch_options quiet;
    quiet.stdout_path = "/dev/null";
    auto p = process::launch(program("tracer_calls"), {}, quiet);
    std::array<std::byte, 8> buf{};
    CHECK_THROWS_WITH(p->read_memory(virt_addr(0), buf), "Cannot access memory at address 0x0");
    CHECK(p->try_read_memory(virt_addr(0), buf) == 0);
    // The last 4 bytes of the stack mapping, read as 8: 4 come back.
    std::uint64_t stack_end = 0;
    for (auto& line : [&] {
             std::vector<std::string> v;
             std::ifstream in("/proc/" + std::to_string(p->pid()) + "/maps");
             for (std::string l; std::getline(in, l);) v.push_back(l);
             return v;
         }()) {
        if (line.find("[stack]") != std::string::npos) {
            stack_end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
        }
    }
    REQUIRE(stack_end != 0);
    CHECK(p->try_read_memory(virt_addr(stack_end - 4), buf) == 4);
    CHECK_THROWS_WITH(p->read_memory(virt_addr(stack_end - 4), buf),
                      "Cannot access memory at address 0x" + fmt::format("{:x}", stack_end));
    CHECK(p->read_string(virt_addr(exe_bias(*p) + nm_address(program("tracer_calls"), "main")), 2).size() <= 2);
}

TEST_CASE("registers: names and sub-registers as gdb, DWARF numbers, writes", "[tracer]") {
    auto p = process::launch(program("tracer_calls"), {"1"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    p->add_breakpoint_site(tick);
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::breakpoint);
    auto* t = p->find_thread(r.tid);
    registers regs = t->regs();
    auto rax = *regs.read("rax");
    CHECK(*regs.read("eax") == (rax & 0xffffffff));
    CHECK(*regs.read("ax") == (rax & 0xffff));
    CHECK(*regs.read("al") == (rax & 0xff));
    CHECK(*regs.read("ah") == ((rax >> 8) & 0xff));
    CHECK(*regs.read("$pc") == tick.addr());
    CHECK(*regs.read_dwarf(16) == tick.addr());
    CHECK(*regs.read_dwarf(7) == *regs.read("rsp"));
    CHECK(*regs.read_dwarf(1) == *regs.read("rdx"));
    CHECK(*regs.read_dwarf(3) == *regs.read("rbx"));
    CHECK_FALSE(regs.read("nosuchreg"));
    CHECK(*regs.read("fs_base") != 0);   // glibc's TLS is set up before main
    // gdb's `info registers` list, in order.
    std::vector<std::string> names;
    for (auto& ri : general_registers()) names.push_back(ri.name);
    REQUIRE(names.size() == 24);
    CHECK(names.front() == "rax");
    CHECK(names[16] == "rip");
    CHECK(names.back() == "gs");
    p->resume();
    CHECK(wait_stop(*p).kind == stop_kind::exited);
}

TEST_CASE("register writes reach the kernel", "[tracer]") {
    auto p = process::launch(program("tracer_calls"), {"1"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    auto* t = p->threads().front();
    registers regs = t->regs();
    auto old_r12 = *regs.read("r12");
    regs.write("r12", 0x1234567890abcdefULL);
    CHECK_FALSE(regs.write("nosuch", 1));
    regs.write("bl", 0x5a);
    t->write_regs(regs);
    user_regs_struct gp{};
    REQUIRE(::ptrace(PTRACE_GETREGS, t->tid(), nullptr, &gp) == 0);
    CHECK(gp.r12 == 0x1234567890abcdefULL);
    CHECK((gp.rbx & 0xff) == 0x5a);
    regs.write("r12", old_r12);
    t->write_regs(regs);
}

TEST_CASE("memory read again after the program ran, or after forget_cached_memory, is what it holds now",
          "[tracer]") {
    launch_options quiet;
    quiet.stdout_path = "/dev/null";
    auto p = process::launch(program("tracer_calls"), {"3"}, quiet);
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    virt_addr ticks(exe_bias(*p) + nm_address(program("tracer_calls"), "ticks"));
    virt_addr marker(exe_bias(*p) + nm_address(program("tracer_calls"), "marker"));
    p->add_breakpoint_site(tick);
    for (int expected = 0; expected < 3; ++expected) {
        p->resume();
        REQUIRE(wait_stop(*p).kind == stop_kind::breakpoint);
        // The same page read twice in one stop, and again at the next stop after tick() ran.
        CHECK(p->read<int>(ticks) == expected);
        CHECK(p->read<int>(ticks) == expected);
    }
    // Memory changed behind the debugger's back (another process's write into shared
    // memory; here /proc/PID/mem): the cached page is kept until it is forgotten.
    CHECK(p->read<std::uint64_t>(marker) == 0x1122334455667788ULL);
    std::uint64_t v = 42;
    int fd = ::open(("/proc/" + std::to_string(p->pid()) + "/mem").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, &v, sizeof v, static_cast<off_t>(marker.addr())) == sizeof v);
    ::close(fd);
    p->forget_cached_memory();
    CHECK(p->read<std::uint64_t>(marker) == 42);
    // Our own writes are seen at once.
    v = 43;
    p->write_memory(marker, std::as_bytes(std::span(&v, 1)));
    CHECK(p->read<std::uint64_t>(marker) == 43);
}

TEST_CASE("forget_cached_memory drops the pages of shared mappings and keeps the private ones",
          "[tracer]") {
    launch_options quiet;
    quiet.stdout_path = "/dev/null";
    auto exe = program("tracer_shared_page");
    auto p = process::launch(exe, {}, quiet);
    std::uint64_t bias = exe_bias(*p);
    virt_addr tick(bias + nm_address(exe, "tick"));
    virt_addr marker(bias + nm_address(exe, "marker"));
    virt_addr bulk(bias + nm_address(exe, "bulk"));
    p->add_breakpoint_site(tick);
    p->resume();
    REQUIRE(wait_stop(*p).kind == stop_kind::breakpoint);
    virt_addr shared(p->read<std::uint64_t>(virt_addr(bias + nm_address(exe, "shared_word"))));
    // Enough private pages in the cache for them to be worth keeping from one command to
    // the next (a listing over many threads).
    for (int i = 0; i < 64; ++i) {
        CHECK(p->read<char>(virt_addr(bulk.addr() + 4096 * static_cast<std::uint64_t>(i))) == static_cast<char>(i));
    }
    CHECK(p->read<std::uint64_t>(shared) == 7);
    CHECK(p->read<std::uint64_t>(marker) == 0x1122334455667788ULL);
    // Both change behind the debugger's back while the process stays stopped: the shared
    // page as another process's write would change it, the private one as nothing but a
    // writer of /proc/PID/mem can.
    auto poke = [&](virt_addr at, std::uint64_t v) {
        int fd = ::open(("/proc/" + std::to_string(p->pid()) + "/mem").c_str(), O_RDWR);
        REQUIRE(fd >= 0);
        REQUIRE(::pwrite(fd, &v, sizeof v, static_cast<off_t>(at.addr())) == sizeof v);
        ::close(fd);
    };
    poke(shared, 99);
    poke(marker, 42);
    p->forget_cached_memory();
    CHECK(p->read<std::uint64_t>(shared) == 99);
    CHECK(p->read<std::uint64_t>(marker) == 0x1122334455667788ULL);
    // Until the process runs again.
    p->resume();
    REQUIRE(wait_stop(*p).kind == stop_kind::breakpoint);
    CHECK(p->read<std::uint64_t>(marker) == 42);
    CHECK(p->read<std::uint64_t>(shared) == 99);
    p->resume();
    CHECK(wait_stop(*p).kind == stop_kind::exited);
}
