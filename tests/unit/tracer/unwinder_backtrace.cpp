// tracer::backtrace on real processes, compared with gdb's `bt` on the same binary at the
// same breakpoint (frame count, function names, and the pc of every caller frame: ASLR is
// off in both), and with the call chain the program is written to have.

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ompdbg/tracer/unwinder.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "unwinder_test_support.hpp"

using namespace ompdbg;
using namespace ompdbg::test;

namespace {

std::string program(const std::string& name, const std::string& cc, int dwarf, int opt) {
    return std::string(targets_dir) + "/tracer/" + name + "-" + cc + "-dwarf" +
           std::to_string(dwarf) + "-O" + std::to_string(opt);
}

/// File address of function `name` in `path` according to binutils' nm.
std::uint64_t nm_file_addr(const std::string& path, const std::string& name) {
    auto r = run({"nm", path});
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string addr, type, sym;
        if (l >> addr >> type >> sym && sym == name) {
            return std::stoull(addr, nullptr, 16);
        }
    }
    FAIL("nm: no " << name << " in " << path);
    return 0;
}

struct named_frame {
    std::string name;
    std::uint64_t pc = 0;   // 0 when gdb does not print it (frame 0, signal frame)
};

struct gdb_answer {
    std::uint64_t break_file_addr = 0;   // where gdb planted `break SPEC` (file address)
    std::vector<named_frame> frames;
};

/// gdb's answer: the breakpoint address it chose and the `bt` at the first hit.
gdb_answer gdb_bt(const std::string& path, const std::vector<std::string>& args,
                  const std::string& spec) {
    std::vector<std::string> argv{"gdb", "-nx", "-batch", "-ex", "set pagination off",
                                  "-ex", "handle SIGUSR1 nostop noprint pass",
                                  "-ex", "break " + spec, "-ex", "run", "-ex", "bt", "--args", path};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, run_options().timeout_after(std::chrono::seconds(60)));
    INFO(r.all());
    REQUIRE(!r.timed_out);
    gdb_answer ans;
    std::smatch m;
    std::regex bp_re(R"(Breakpoint 1 at (0x[0-9a-f]+))");
    REQUIRE(std::regex_search(r.out, m, bp_re));
    ans.break_file_addr = std::stoull(m[1], nullptr, 16);
    std::istringstream in(r.out);
    std::string line;
    std::regex with_pc(R"(^#\d+\s+(0x[0-9a-f]+) in (\S+) )");
    std::regex without_pc(R"(^#\d+\s+(\S+))");
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, with_pc)) {
            ans.frames.push_back({m[2], std::stoull(m[1], nullptr, 16)});
        } else if (std::regex_search(line, m, without_pc)) {
            std::string name = m[1];
            if (name == "<signal") {
                name = "<signal handler called>";
            }
            ans.frames.push_back({name, 0});
        }
    }
    REQUIRE(!ans.frames.empty());
    return ans;
}

/// Function names of our frames through binutils' addr2line (independent of ompdbg; it
/// follows build-id debug files, as gdb does, so libc's local functions have names).
std::vector<named_frame> name_frames(tracer::target& tgt, const std::vector<tracer::frame>& frames) {
    std::vector<named_frame> out(frames.size());
    std::map<std::string, std::vector<std::size_t>> by_module;
    const auto& mods = tgt.modules();
    for (std::size_t i = 0; i < frames.size(); ++i) {
        out[i].pc = frames[i].pc.addr();
        if (frames[i].is_signal_frame) {
            out[i].name = "<signal handler called>";
            continue;
        }
        out[i].name = "??";
        for (auto& m : mods) {
            if (!by_module.count(m.path.string())) {
                by_module[m.path.string()];
            }
        }
        // The module with the greatest bias not above the pc (modules do not overlap).
        const tracer::loaded_module* best = nullptr;
        for (auto& m : mods) {
            if (m.load_bias <= frames[i].lookup_pc().addr() && (!best || m.load_bias > best->load_bias)) {
                best = &m;
            }
        }
        if (best) {
            by_module[best->path.string()].push_back(i);
        }
    }
    for (auto& [path, idx] : by_module) {
        if (idx.empty()) {
            continue;
        }
        const tracer::loaded_module* mod = nullptr;
        for (auto& m : mods) {
            if (m.path.string() == path) {
                mod = &m;
            }
        }
        std::vector<std::string> argv{"addr2line", "-f", "-e", path};
        for (auto i : idx) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%#lx",
                          static_cast<unsigned long>(mod->to_file(frames[i].lookup_pc())));
            argv.push_back(buf);
        }
        auto r = run(argv);
        std::istringstream in(r.out);
        for (auto i : idx) {
            std::string fn, loc;
            std::getline(in, fn);
            std::getline(in, loc);
            out[i].name = fn;
        }
    }
    return out;
}

/// Our frames cut after `main` (gdb's `backtrace past-main` is off).
std::vector<named_frame> until_main(std::vector<named_frame> v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i].name == "main") {
            v.resize(i + 1);
            break;
        }
    }
    return v;
}

std::string describe(const std::vector<named_frame>& v) {
    std::ostringstream o;
    for (std::size_t i = 0; i < v.size(); ++i) {
        o << "#" << i << " " << std::hex << v[i].pc << " " << v[i].name << "\n";
    }
    return o.str();
}

/// Runs `path args` to gdb's breakpoint `spec` under gdb and under the test launcher, and
/// checks that our backtrace equals gdb's. Returns our named frames.
std::vector<named_frame> compare_with_gdb(const std::string& path, const std::vector<std::string>& args,
                                          const std::string& spec = "c") {
    auto gdb = gdb_bt(path, args, spec);
    auto proc = launch_traced(path, args);
    pid_t tid = run_to_breakpoint(*proc, gdb.break_file_addr);
    auto frames = tracer::backtrace(*proc, tid);
    auto ours = until_main(name_frames(*proc, frames));
    INFO("program: " << path);
    INFO("gdb:\n" << describe(gdb.frames) << "ours:\n" << describe(ours));
    REQUIRE(ours.size() == gdb.frames.size());
    for (std::size_t i = 0; i < ours.size(); ++i) {
        CHECK(ours[i].name == gdb.frames[i].name);
        if (gdb.frames[i].pc != 0) {
            CHECK(ours[i].pc == gdb.frames[i].pc);
        }
    }
    return ours;
}

std::vector<std::string> names(const std::vector<named_frame>& v) {
    std::vector<std::string> out;
    for (auto& f : v) {
        out.push_back(f.name);
    }
    return out;
}

}  // namespace

// One test case per compiler: each gdb run costs seconds on a loaded machine, and ctest
// gives every test case its own timeout.
TEST_CASE("backtrace of main -> a -> b -> c matches the program and gdb's bt (gcc)", "[tracer][unwind]") {
    auto dwarf = GENERATE(4, 5);
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_chain", "gcc", dwarf, opt), {"chain"});
    CHECK(names(ours) == std::vector<std::string>{"c", "b", "a", "main"});
}

TEST_CASE("backtrace of main -> a -> b -> c matches the program and gdb's bt (clang)", "[tracer][unwind]") {
    std::string cc = "clang";
    auto dwarf = GENERATE(4, 5);
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_chain", cc, dwarf, opt), {"chain"});
    CHECK(names(ours) == std::vector<std::string>{"c", "b", "a", "main"});
}

TEST_CASE("backtrace at a function's first instruction matches gdb's bt", "[tracer][unwind]") {
    auto cc = GENERATE(as<std::string>{}, "gcc", "clang");
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_chain", cc, 5, opt), {"chain"}, "*c");
    CHECK(names(ours) == std::vector<std::string>{"c", "b", "a", "main"});
}

TEST_CASE("backtrace through 20 levels of recursion has every level", "[tracer][unwind]") {
    auto cc = GENERATE(as<std::string>{}, "gcc", "clang");
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_chain", cc, 5, opt), {"recurse", "20"});
    std::vector<std::string> expected{"c"};
    expected.insert(expected.end(), 21, "recurse");
    expected.push_back("main");
    CHECK(names(ours) == expected);
}

TEST_CASE("backtrace of a second thread ends in libc's start_thread and clone3", "[tracer][unwind]") {
    auto cc = GENERATE(as<std::string>{}, "gcc", "clang");
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_chain", cc, 5, opt), {"thread"});
    CHECK(names(ours) == std::vector<std::string>{"c", "b", "a", "thread_main", "start_thread", "clone3"});
}

TEST_CASE("backtrace from a signal handler crosses the signal frame", "[tracer][unwind]") {
    auto cc = GENERATE(as<std::string>{}, "gcc", "clang");
    auto opt = GENERATE(0, 2);
    auto path = program("unwind_chain", cc, 5, opt);
    auto ours = compare_with_gdb(path, {"signal"});
    auto n = names(ours);
    auto sig = std::find(n.begin(), n.end(), "<signal handler called>");
    REQUIRE(sig != n.end());
    CHECK(n.back() == "main");
}

TEST_CASE("backtrace at -O2 without frame pointers matches gdb's bt (gcc)", "[tracer][unwind]") {
    auto mode = GENERATE(as<std::string>{}, "chain", "thread", "signal");
    auto ours = compare_with_gdb(program("unwind_nofp", "gcc", 5, 2), {mode});
    CHECK(ours.front().name == "c");
}

TEST_CASE("backtrace at -O2 without frame pointers matches gdb's bt (clang)", "[tracer][unwind]") {
    std::string cc = "clang";
    auto mode = GENERATE(as<std::string>{}, "chain", "thread", "signal");
    auto ours = compare_with_gdb(program("unwind_nofp", cc, 5, 2), {mode});
    CHECK(ours.front().name == "c");
}

TEST_CASE("backtrace without CFI for the program's functions follows the frame pointers", "[tracer][unwind]") {
    auto opt = GENERATE(0, 2);
    auto ours = compare_with_gdb(program("unwind_nocfi", "gcc", 5, opt), {"chain"});
    CHECK(names(ours) == std::vector<std::string>{"c", "b", "a", "main"});
}

TEST_CASE("backtrace of the main thread reaches _start past main", "[tracer][unwind]") {
    auto path = program("unwind_chain", "gcc", 5, 0);
    auto gdb = gdb_bt(path, {"chain"}, "c");
    auto proc = launch_traced(path, {"chain"});
    run_to_breakpoint(*proc, gdb.break_file_addr);
    auto frames = tracer::backtrace(*proc, proc->pid());
    auto n = names(name_frames(*proc, frames));
    INFO(describe(name_frames(*proc, frames)));
    REQUIRE(n.size() >= 5);
    CHECK(n.back() == "_start");
    // Every caller frame's CFA is above its sp and the next frame's sp is this CFA.
    for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
        CHECK(frames[i].cfa > frames[i].sp);
        CHECK(frames[i + 1].sp == frames[i].cfa);
        CHECK(frames[i + 1].is_caller_frame);
        REQUIRE(frames[i + 1].dwarf_regs.size() == 17);
        CHECK(frames[i + 1].dwarf_regs[16] == frames[i + 1].pc.addr());
        CHECK(frames[i + 1].dwarf_regs[7] == frames[i + 1].sp.addr());
    }
    CHECK_FALSE(frames[0].is_caller_frame);
}

TEST_CASE("backtrace honours max_frames", "[tracer][unwind]") {
    auto path = program("unwind_chain", "gcc", 5, 0);
    auto gdb = gdb_bt(path, {"recurse", "20"}, "c");
    auto proc = launch_traced(path, {"recurse", "20"});
    run_to_breakpoint(*proc, gdb.break_file_addr);
    auto full = tracer::backtrace(*proc, proc->pid());
    auto three = tracer::backtrace(*proc, proc->pid(), 3);
    REQUIRE(three.size() == 3);
    REQUIRE(full.size() > 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(three[i].pc == full[i].pc);
        CHECK(three[i].cfa == full[i].cfa);   // the last one's CFA too (one step more)
    }
    auto one = tracer::backtrace(*proc, proc->pid(), 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].cfa == full[1].sp);
    CHECK(tracer::backtrace(*proc, proc->pid(), 1).size() == 1);
    CHECK(tracer::backtrace(*proc, proc->pid(), 0).empty());
}

namespace {

/// The real process, but one thread's registers replaced (a corrupted stack as a user
/// may meet it after a wild jump or stack smash).
class garbage_regs_target final : public tracer::target {
public:
    garbage_regs_target(tracer::process& real, pid_t tid, const user_regs_struct& regs)
        : real_(real), thread_(tid, regs) {}
    pid_t pid() const override { return real_.pid(); }
    bool is_live() const override { return true; }
    std::filesystem::path executable() const override { return real_.executable(); }
    void read_memory(virt_addr a, std::span<std::byte> out) override { real_.read_memory(a, out); }
    std::size_t try_read_memory(virt_addr a, std::span<std::byte> out) override {
        return real_.try_read_memory(a, out);
    }
    void write_memory(virt_addr, std::span<const std::byte>) override {}
    std::vector<tracer::thread*> threads() override { return {&thread_}; }
    tracer::thread* find_thread(pid_t tid) override { return tid == thread_.tid() ? &thread_ : nullptr; }
    const std::vector<tracer::loaded_module>& modules() override { return real_.modules(); }

private:
    class fixed_thread final : public tracer::thread {
    public:
        fixed_thread(pid_t tid, const user_regs_struct& r) : tid_(tid), regs_(r, {}) {}
        pid_t tid() const override { return tid_; }
        std::string name() const override { return {}; }
        tracer::thread_state state() const override { return tracer::thread_state::stopped; }
        const tracer::registers& regs() override { return regs_; }
        void write_regs(const tracer::registers&) override {}

    private:
        pid_t tid_;
        tracer::registers regs_;
    };
    tracer::process& real_;
    fixed_thread thread_;
};

}  // namespace

TEST_CASE("backtrace of a corrupt stack ends without looping or crashing", "[tracer][unwind]") {
    auto path = program("unwind_chain", "gcc", 5, 0);
    auto gdb = gdb_bt(path, {"chain"}, "c");
    auto proc = launch_traced(path, {"chain"});
    run_to_breakpoint(*proc, gdb.break_file_addr);
    auto real = proc->find_thread(proc->pid())->regs().gp();

    // A stack word that points at itself: an rbp chain that would loop forever.
    std::uint64_t sp = real.rsp;
    user_regs_struct loop = real;
    loop.rip = 0x1234;          // unmapped: no CFI, only the frame-pointer fallback
    loop.rbp = sp;              // [rbp] is whatever is there; the CFA must still increase
    user_regs_struct nulls = real;
    nulls.rip = 0;
    nulls.rsp = 0;
    nulls.rbp = 0;
    user_regs_struct wild = real;
    wild.rsp = 0xdeadbeef0;
    wild.rbp = 0xfffffffffffffff8ULL;
    user_regs_struct code_as_stack = real;
    code_as_stack.rsp = real.rip & ~7ULL;   // "stack" inside the text segment
    code_as_stack.rbp = real.rip & ~7ULL;

    for (auto* regs : {&loop, &nulls, &wild, &code_as_stack}) {
        garbage_regs_target bad(*proc, proc->pid(), *regs);
        std::vector<tracer::frame> frames;
        REQUIRE_NOTHROW(frames = tracer::backtrace(bad, proc->pid(), 64));
        CHECK(frames.size() >= 1);
        CHECK(frames.size() <= 64);
        for (std::size_t i = 1; i < frames.size(); ++i) {
            CHECK(frames[i].sp > frames[i - 1].sp);
        }
    }
}

TEST_CASE("backtrace of an unknown thread is an error", "[tracer][unwind]") {
    auto path = program("unwind_chain", "gcc", 5, 0);
    auto proc = launch_traced(path, {"chain"});
    CHECK_THROWS_WITH(tracer::backtrace(*proc, 999999), Catch::Contains("999999"));
}

TEST_CASE("backtraces of 256 threads are identical and complete", "[tracer][unwind]") {
    constexpr int n = 256;
    auto path = program("unwind_chain", "gcc", 5, 2);
    auto proc = launch_traced(path, {"many", std::to_string(n)});
    pid_t main_tid = run_to_breakpoint(*proc, nm_file_addr(path, "all_parked"), 60000);
    std::vector<pid_t> workers;
    for (auto* t : proc->threads()) {
        if (t->tid() != main_tid) {
            workers.push_back(t->tid());
        }
    }
    REQUIRE(workers.size() == n);

    auto round = [&] {
        std::vector<std::vector<tracer::frame>> all;
        auto start = std::chrono::steady_clock::now();
        for (pid_t tid : workers) {
            all.push_back(tracer::backtrace(*proc, tid));
        }
        return std::pair(std::chrono::steady_clock::now() - start, all);
    };
    auto [cold, first] = round();
    auto [warm, second] = round();
    auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
    WARN("backtraces of " << n << " threads: cold " << ms(cold) << " ms, warm " << ms(warm) << " ms");

    // Every worker passed the barrier and is in (or on its way into) pthread_mutex_lock
    // under hold(): from hold down, every stack names the same functions, and below hold
    // every return address is the same.
    std::vector<std::string> tail{"hold", "b", "a", "thread_main", "start_thread", "clone3"};
    std::vector<std::uint64_t> tail_pcs;
    for (std::size_t t = 0; t < workers.size(); ++t) {
        auto named = name_frames(*proc, first[t]);
        auto n_ = names(named);
        INFO("thread " << workers[t] << ":\n" << describe(named));
        auto it = std::find(n_.begin(), n_.end(), "hold");
        REQUIRE(it != n_.end());
        std::size_t at = static_cast<std::size_t>(it - n_.begin());
        CHECK(std::vector<std::string>(it, n_.end()) == tail);
        // hold's own pc differs between threads still on their way into the lock and
        // threads already blocked in it; its callers' return addresses do not.
        std::vector<std::uint64_t> pcs;
        for (std::size_t i = at + 1; i < first[t].size(); ++i) {
            pcs.push_back(first[t][i].pc.addr());
        }
        if (tail_pcs.empty()) {
            tail_pcs = pcs;
        }
        CHECK(pcs == tail_pcs);
        REQUIRE(second[t].size() == first[t].size());
        for (std::size_t i = 0; i < first[t].size(); ++i) {
            CHECK(second[t][i].pc == first[t][i].pc);
            CHECK(second[t][i].cfa == first[t][i].cfa);
        }
        if (t >= 16) {
            break;   // names through addr2line are slow; the pcs below cover the rest
        }
    }
    for (std::size_t t = 0; t < workers.size(); ++t) {
        REQUIRE(first[t].size() >= tail_pcs.size());
        std::vector<std::uint64_t> pcs;
        for (std::size_t i = first[t].size() - tail_pcs.size(); i < first[t].size(); ++i) {
            pcs.push_back(first[t][i].pc.addr());
        }
        CHECK(pcs == tail_pcs);
    }
    // Speed is measured by the benchmarks (issue 9), never asserted in a unit test: the
    // WARN above only reports the cost.
}

TEST_CASE("backtrace of a thread interrupted inside the vdso reaches main", "[tracer][unwind]") {
    auto path = program("unwind_chain", "gcc", 5, 2);
    auto proc = launch_traced(path, {"clock"});
    run_to_breakpoint(*proc, nm_file_addr(path, "c"));   // past the dynamic loader, in main
    proc->remove_breakpoint_site(proc->modules().front().to_runtime(nm_file_addr(path, "c")));
    proc->resume();
    // Where the vdso is (ground truth from the kernel).
    std::uint64_t vdso_lo = 0, vdso_hi = 0;
    int in_vdso = 0;
    for (int attempt = 0; attempt < 300; ++attempt) {
        proc->interrupt();
        auto stop = wait_interesting_stop(*proc);
        REQUIRE(stop.kind == tracer::stop_kind::interrupted);
        if (vdso_hi == 0) {
            std::ifstream maps("/proc/" + std::to_string(proc->pid()) + "/maps");
            std::string line;
            while (std::getline(maps, line)) {
                if (line.find("[vdso]") != std::string::npos) {
                    std::sscanf(line.c_str(), "%lx-%lx", &vdso_lo, &vdso_hi);
                }
            }
            REQUIRE(vdso_hi != 0);
        }
        auto frames = tracer::backtrace(*proc, proc->pid());
        REQUIRE(!frames.empty());
        if (frames[0].pc.addr() >= vdso_lo && frames[0].pc.addr() < vdso_hi) {
            ++in_vdso;
        }
        auto n = names(name_frames(*proc, frames));
        INFO(describe(name_frames(*proc, frames)));
        CHECK(std::find(n.begin(), n.end(), "main") != n.end());
        CHECK(n.back() == "_start");
        proc->resume();
        if (in_vdso >= 3) {
            break;
        }
        // Sampling, not synchronisation: let it spin a little before the next sample.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(in_vdso > 0);   // the loop spends most of its time there
}
