// Breakpoint sites: hits counted against what the program prints, threads hitting the same
// site at once, single-stepping, registers at a hit.

#include "tracer_test_helpers.hpp"

#include <csignal>
#include <map>
#include <set>

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

TEST_CASE("a breakpoint on a function is hit once per call, with rip at the function", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_calls"), {"6"}, opts);
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    auto& site = p->add_breakpoint_site(tick);
    CHECK(site.is_enabled());
    CHECK_FALSE(site.is_internal());
    CHECK(site.address() == tick);
    int hits = 0;
    for (;;) {
        p->resume();
        auto r = wait_stop(*p);
        if (r.kind == stop_kind::exited) {
            CHECK(r.exit_code == 7);
            break;
        }
        REQUIRE(r.kind == stop_kind::breakpoint);
        REQUIRE(r.breakpoint_addr);
        CHECK(*r.breakpoint_addr == tick);
        CHECK(r.tid == p->pid());
        auto& regs = p->find_thread(r.tid)->regs();
        CHECK(regs.pc() == tick.addr());
        CHECK(*regs.read("rip") == tick.addr());
        ++hits;
    }
    CHECK(out.contents().rfind("calls=6 ", 0) == 0);
    CHECK(hits == 6);
}

TEST_CASE("a disabled or removed site is not hit, a re-enabled one is", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    auto p = process::launch(program("tracer_calls"), {"4"}, opts);
    virt_addr tick(exe_bias(*p) + nm_address(program("tracer_calls"), "tick"));
    p->add_breakpoint_site(tick);
    p->add_breakpoint_site(tick);   // a second logical breakpoint shares the site
    p->resume();
    REQUIRE(wait_stop(*p).kind == stop_kind::breakpoint);
    p->disable_site(tick);
    CHECK_FALSE(p->find_breakpoint_site(tick)->is_enabled());
    p->resume();   // tick() is not reported again: calls 2..4 run through
    auto r = wait_stop(*p);
    CHECK(r.kind == stop_kind::exited);
    CHECK(out.contents().rfind("calls=4 ", 0) == 0);

    auto q = process::launch(program("tracer_calls"), {"4"}, opts);
    q->add_breakpoint_site(tick);
    q->add_breakpoint_site(tick);
    q->remove_breakpoint_site(tick);
    REQUIRE(q->find_breakpoint_site(tick));   // one reference left
    q->resume();
    REQUIRE(wait_stop(*q).kind == stop_kind::breakpoint);
    q->remove_breakpoint_site(tick);
    CHECK(q->find_breakpoint_site(tick) == nullptr);
    q->resume();
    CHECK(wait_stop(*q).kind == stop_kind::exited);
}

TEST_CASE("four threads hitting the same breakpoint at once each report their hit", "[tracer]") {
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    const int rounds = 5;
    auto p = process::launch(program("tracer_threads"), {std::to_string(rounds)}, opts);
    virt_addr hit(exe_bias(*p) + nm_address(program("tracer_threads"), "hit"));
    p->add_breakpoint_site(hit);
    virt_addr after_join(exe_bias(*p) + nm_address(program("tracer_threads"), "after_join"));
    p->add_breakpoint_site(after_join);
    int hits = 0, created = 0, exited_threads = 0, reported_as_others = 0;
    bool joined = false;
    std::set<pid_t> hitters, seen_created;
    for (;;) {
        p->resume();
        auto r = wait_stop(*p);
        if (r.kind == stop_kind::exited) {
            CHECK(r.exit_code == 0);
            break;
        }
        switch (r.kind) {
        case stop_kind::breakpoint:
            if (*r.breakpoint_addr == after_join) {
                // Every worker has been joined. pthread_join can return before the kernel
                // tells the tracer about the exit (the tid futex is cleared first), so
                // some exits may still be queued: they come before the process exit.
                joined = true;
                break;
            }
            CHECK(*r.breakpoint_addr == hit);
            CHECK(p->find_thread(r.tid)->regs().pc() == hit.addr());
            // All-stop: every thread is stopped when a hit is reported.
            for (auto* t : p->threads()) {
                CHECK(t->state() == thread_state::stopped);
            }
            reported_as_others += static_cast<int>(r.other_breakpoint_tids.size());
            hitters.insert(r.tid);
            ++hits;
            break;
        case stop_kind::thread_created:
            CHECK(r.tid == p->pid());
            CHECK(p->find_thread(r.new_tid) != nullptr);
            seen_created.insert(r.new_tid);
            ++created;
            break;
        case stop_kind::thread_exited:
            CHECK(p->find_thread(r.tid) == nullptr);
            ++exited_threads;
            break;
        default:
            FAIL("unexpected stop kind " << static_cast<int>(r.kind) << " signal " << r.signo);
        }
    }
    CHECK(out.contents() == "calls=" + std::to_string(4 * rounds) + "\n");
    CHECK(hits == 4 * rounds);
    CHECK(created == 4);
    CHECK(joined);
    CHECK(exited_threads == 4);
    CHECK(hitters == seen_created);
    // With a barrier before each call, several threads reach the site in the same stop at
    // least sometimes; not asserted (timing), only reported.
    INFO("hits reported as other_breakpoint_tids: " << reported_as_others);
}

TEST_CASE("step_instruction moves one thread by one instruction, also off a breakpoint", "[tracer]") {
    auto p = process::launch(program("tracer_calls"), {"2"}, [] {
        launch_options o;
        o.stdout_path = "/dev/null";
        return o;
    }());
    auto bias = exe_bias(*p);
    auto insns = objdump_instructions(program("tracer_calls"), "tick");
    REQUIRE(insns.size() >= 3);
    virt_addr tick(bias + insns[0]);
    p->add_breakpoint_site(tick);
    // A second site on the next instruction: the step lands on it without reporting it.
    virt_addr second(bias + insns[1]);
    p->add_breakpoint_site(second);
    p->resume();
    auto r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::breakpoint);
    CHECK(*r.breakpoint_addr == tick);
    auto s = p->step_instruction(r.tid);
    CHECK(s.kind == stop_kind::single_step);
    CHECK(p->find_thread(r.tid)->regs().pc() == second.addr());
    s = p->step_instruction(r.tid);
    CHECK(s.kind == stop_kind::single_step);
    CHECK(p->find_thread(r.tid)->regs().pc() == bias + insns[2]);
    // Both int3s are still in place: the second call hits the first site again.
    p->resume();
    r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::breakpoint);
    CHECK(*r.breakpoint_addr == tick);
    p->resume();
    r = wait_stop(*p);
    REQUIRE(r.kind == stop_kind::breakpoint);
    CHECK(*r.breakpoint_addr == second);
    p->resume();
    CHECK(wait_stop(*p).kind == stop_kind::exited);
}
