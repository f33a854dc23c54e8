// Stepping over breakpoints out of line (libtracer/src/out_of_line.cpp): each instruction
// form the scheme relocates or emulates, hit by several threads at once, must leave the
// program computing exactly what it computes untraced (it checks its own sums), with one
// reported hit per call and the step-over done the way the form calls for.

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>

#include "ompdbg/tracer/process.hpp"
#include "tracer_test_helpers.hpp"

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {

const char* const forms_program = "tracer_step_over_forms";

/// Runs the forms program with breakpoints on `sites` until it exits; hits per site.
/// `observe` sees every stop but the exit before the next resume.
std::map<std::string, int> run_with_sites(process& p, const std::vector<std::string>& sites,
                                          const std::function<void(const stop_reason&)>& observe = {}) {
    std::map<std::uint64_t, std::string> by_addr;
    for (const auto& s : sites) {
        virt_addr a(exe_bias(p) + nm_address(program(forms_program), s));
        p.add_breakpoint_site(a);
        by_addr[a.addr()] = s;
    }
    std::map<std::string, int> hits;
    for (;;) {
        p.resume();
        auto r = wait_stop(p);
        if (r.kind == stop_kind::exited) {
            CHECK(r.exit_code == 0);
            break;
        }
        if (observe) {
            observe(r);
        }
        if (r.kind == stop_kind::breakpoint) {
            REQUIRE(by_addr.count(r.breakpoint_addr->addr()) == 1);
            CHECK(p.find_thread(r.tid)->regs().pc() == r.breakpoint_addr->addr());
            ++hits[by_addr[r.breakpoint_addr->addr()]];
            continue;
        }
        // Thread creation and exit are the only other events of this program.
        REQUIRE((r.kind == stop_kind::thread_created || r.kind == stop_kind::thread_exited));
    }
    return hits;
}

std::string expected_output(int threads, int rounds) {
    std::string s;
    for (const char* f : {"endbr64", "push_rbp", "mov_rbp", "sub_rsp", "rip_rmw", "rip_lea", "rip_load", "rip_jmp",
                          "call_rel", "jmp_rel", "jcc", "jcc_taken", "jcc_mixed"}) {
        s += std::string(f) + " ok\n";
    }
    return s + "counter=" + std::to_string(threads * rounds) + "\n";
}

}  // namespace

TEST_CASE("function-entry instructions are stepped over out of line, once per hit, by four threads at once",
          "[tracer][step-over]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 4, threads = 4;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    std::vector<std::string> sites = {"endbr64_site", "push_rbp_site", "mov_rbp_site", "sub_rsp_site"};
    auto hits = run_with_sites(*p, sites);
    CHECK(out.contents() == expected_output(threads, rounds));
    for (const auto& s : sites) {
        CAPTURE(s);
        CHECK(hits[s] == threads * rounds);
    }
    auto counts = p->step_overs();
    // Every reported hit is stepped over once, out of line (none single-stepped); the
    // dynamic loader's internal breakpoint adds a few more.
    CHECK(counts.single_stepped == 0);
    CHECK(counts.emulated == 0);
    CHECK(counts.out_of_line >= static_cast<std::uint64_t>(threads * rounds * sites.size()));
}

TEST_CASE("rip-relative instructions run out of line reach the same data", "[tracer][step-over]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 4, threads = 4;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    // lock addq $1, counter(%rip) / lea table(%rip) / mov helper_ptr(%rip) / jmp *helper_ptr(%rip)
    std::vector<std::string> sites = {"rip_rmw_site", "rip_lea_site", "rip_load_site", "rip_jmp_site"};
    auto hits = run_with_sites(*p, sites);
    // The program's own checks: sums of every form and the counter incremented by the
    // relocated lock addq, exactly once per call.
    CHECK(out.contents() == expected_output(threads, rounds));
    for (const auto& s : sites) {
        CAPTURE(s);
        CHECK(hits[s] == threads * rounds);
    }
    auto counts = p->step_overs();
    CHECK(counts.single_stepped == 0);
    CHECK(counts.out_of_line >= static_cast<std::uint64_t>(threads * rounds * sites.size()));
}

TEST_CASE("call, jmp rel32 and conditional jumps are emulated, one stop per hit", "[tracer][step-over]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 3, threads = 4;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    // jl rel8 never taken, jge rel32 always taken, jbe taken in round 0 only: the program
    // returns a wrong sum for any jump that goes the wrong way.
    std::vector<std::string> sites = {"call_rel_site", "jmp_rel_site", "jcc_site", "jcc_taken_site",
                                      "jcc_mixed_site"};
    auto hits = run_with_sites(*p, sites);
    CHECK(out.contents() == expected_output(threads, rounds));
    for (const auto& s : sites) {
        CAPTURE(s);
        CHECK(hits[s] == threads * rounds);
    }
    auto counts = p->step_overs();
    // Every hit emulated once, none single-stepped; only the dynamic loader's internal
    // breakpoint ran out of line.
    CHECK(counts.emulated == static_cast<std::uint64_t>(sites.size() * threads * rounds));
    CHECK(counts.single_stepped == 0);
}

TEST_CASE("a breakpoint at the return address of an emulated call is hit", "[tracer][step-over]") {
    // call_rel_site: call form_helper; ret — the emulated call must push the real return
    // address, so a site on the `ret` after it is reached once per call.
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 2, threads = 2;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    auto insns = objdump_instructions(program(forms_program), "call_rel_site");
    REQUIRE(insns.size() >= 2);
    virt_addr call(exe_bias(*p) + insns[0]), ret(exe_bias(*p) + insns[1]);
    p->add_breakpoint_site(call);
    p->add_breakpoint_site(ret);
    std::uint64_t worker = exe_bias(*p) + nm_address(program(forms_program), "worker");
    int at_call = 0, at_ret = 0;
    for (;;) {
        p->resume();
        auto r = wait_stop(*p);
        if (r.kind == stop_kind::exited) {
            CHECK(r.exit_code == 0);
            break;
        }
        if (r.kind == stop_kind::breakpoint) {
            if (*r.breakpoint_addr == call) {
                ++at_call;
            } else if (*r.breakpoint_addr == ret) {
                ++at_ret;
                // The helper returned here through the pushed address; what is left on the
                // stack is the return address into the caller, worker().
                auto sp = p->find_thread(r.tid)->regs().sp();
                std::uint64_t back = 0;
                p->read_memory(virt_addr(sp), std::as_writable_bytes(std::span(&back, 1)));
                CHECK(back > worker);
                CHECK(back < worker + 0x400);
            }
        }
    }
    CHECK(out.contents() == expected_output(threads, rounds));
    CHECK(at_call == threads * rounds);
    CHECK(at_ret == threads * rounds);
}

// set_early_breakpoint_reports: a lone hit (or a new thread) is reported before the other
// threads are stopped, resume() then runs the threads that are stopped and leaves the others
// running. The program must compute what it computes untraced, with every hit reported once.
TEST_CASE("early reports: four threads' hits are each reported once and stepped over with the others left "
          "running, new threads are reported stopped, and stop_others completes the stop",
          "[tracer][step-over]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 8, threads = 4;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    p->set_early_breakpoint_reports(true);
    std::vector<std::string> sites = {"endbr64_site", "push_rbp_site", "mov_rbp_site", "sub_rsp_site"};
    int early = 0, settled = 0, early_threads = 0;
    auto hits = run_with_sites(*p, sites, [&](const stop_reason& r) {
        CHECK(p->others_running() == r.others_running);
        if (!r.others_running) {
            return;
        }
        if (r.kind == stop_kind::breakpoint && ++early % 3 == 0) {
            // Every third: complete the stop as the debugger does for a hit it shows.
            p->stop_others();
            CHECK_FALSE(p->others_running());
            for (auto* t : p->threads()) {
                CHECK_NOTHROW(t->regs().pc());
            }
            ++settled;
        } else if (r.kind == stop_kind::thread_created) {
            // Reported early once the new thread stopped: both it and its creator can be read.
            ++early_threads;
            REQUIRE(p->find_thread(r.new_tid) != nullptr);
            CHECK_NOTHROW(p->find_thread(r.new_tid)->regs().pc());
            CHECK_NOTHROW(p->find_thread(r.tid)->regs().pc());
        }
    });
    CHECK(out.contents() == expected_output(threads, rounds));
    for (const auto& s : sites) {
        CAPTURE(s);
        CHECK(hits[s] == threads * rounds);
    }
    CHECK(early > 0);
    CHECK(settled > 0);
    CHECK(early_threads > 0);
    CHECK(p->step_overs().single_stepped == 0);
}

// set_resume_creators_early: a new thread's creator goes on before the creation is reported,
// so the debugger announces the new thread (stopped, its registers readable) while the
// creator runs; the program computes what it computes untraced, every hit reported once.
TEST_CASE("early reports with creators resumed early: a new thread is reported stopped while its creator runs on",
          "[tracer][step-over]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 8, threads = 4;
    auto p = process::launch(program(forms_program), {std::to_string(rounds), std::to_string(threads)}, opts);
    p->set_early_breakpoint_reports(true);
    p->set_resume_creators_early(true);
    std::vector<std::string> sites = {"endbr64_site", "push_rbp_site"};
    int created = 0, creators_running = 0;
    auto hits = run_with_sites(*p, sites, [&](const stop_reason& r) {
        if (r.kind != stop_kind::thread_created) {
            return;
        }
        ++created;
        REQUIRE(p->find_thread(r.new_tid) != nullptr);
        CHECK(p->find_thread(r.new_tid)->state() == thread_state::stopped);
        CHECK(p->find_thread(r.new_tid)->gp_regs().fs_base != 0);
        CHECK_NOTHROW(p->find_thread(r.new_tid)->regs().pc());
        if (r.others_running && p->find_thread(r.tid) && p->find_thread(r.tid)->state() == thread_state::running) {
            ++creators_running;
        }
    });
    CHECK(out.contents() == expected_output(threads, rounds));
    for (const auto& s : sites) {
        CAPTURE(s);
        CHECK(hits[s] == threads * rounds);
    }
    CHECK(created > 0);
    CHECK(creators_running > 0);
}
