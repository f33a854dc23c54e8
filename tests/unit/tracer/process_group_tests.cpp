// process_group: several processes waited for in one loop; MPIR acquisition of a real
// Open MPI job (mpirun of the bootstrap cache).

#include "tracer_test_helpers.hpp"

#include <csignal>
#include <map>
#include <regex>
#include <set>

#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/process_group.hpp"

using namespace ompdbg;
using namespace ompdbg::tracer;
using namespace tracer_test;

namespace {

/// wait_any with a deadline (library events resumed over); fails instead of hanging.
process_group::event wait_group(process_group& g, int ms = 30000) {
    for (;;) {
        auto e = g.wait_any(ms);
        if (!e) {
            for (auto* p : g.members()) {
                p->kill();
            }
            FAIL("no member stopped within " << ms << " ms");
        }
        if (e->why.kind == stop_kind::library_event || e->why.kind == stop_kind::thread_created ||
            e->why.kind == stop_kind::thread_exited) {
            e->proc->resume();
            continue;
        }
        return *e;
    }
}

std::string mpirun_path() { return std::string(ompdbg::test::cache_dir) + "/openmpi-4.1.4/bin/mpirun"; }

}  // namespace

TEST_CASE("process_group reports the breakpoint hits and exits of two processes", "[tracer][group]") {
    std::string prog = program("tracer_calls");
    std::uint64_t tick = nm_address(prog, "tick");
    temp_file out1, out2;
    launch_options o1, o2;
    o1.stdout_path = out1.path;
    o2.stdout_path = out2.path;
    auto a = process::launch(prog, {"2"}, o1);
    auto b = process::launch(prog, {"3"}, o2);
    // Non-PIE or ASLR off: both map tick at the same address; nm gives the file address.
    auto bias = [](process& p) {
        for (auto& m : p.modules()) {
            if (m.is_executable) {
                return m.load_bias;
            }
        }
        return std::uint64_t{0};
    };
    a->add_breakpoint_site(virt_addr(tick + bias(*a)));
    b->add_breakpoint_site(virt_addr(tick + bias(*b)));
    process_group g;
    g.add(*a);
    g.add(*b);
    g.add(*a);
    CHECK(g.members().size() == 2);
    std::map<pid_t, int> hits;
    std::map<pid_t, int> exit_codes;
    while (exit_codes.size() < 2) {
        g.resume_all();
        auto e = wait_group(g);
        if (e.why.kind == stop_kind::breakpoint) {
            ++hits[e.proc->pid()];
        } else {
            REQUIRE(e.why.kind == stop_kind::exited);
            exit_codes[e.proc->pid()] = e.why.exit_code;
        }
    }
    CHECK(hits[a->pid()] == 2);
    CHECK(hits[b->pid()] == 3);
    CHECK(exit_codes[a->pid()] == 7);
    CHECK(exit_codes[b->pid()] == 7);
    CHECK(out1.contents().rfind("calls=2", 0) == 0);
    CHECK(out2.contents().rfind("calls=3", 0) == 0);
    CHECK_THROWS_WITH(g.wait_any(0), "The program is not running.");
}

TEST_CASE("process_group::stop_all stops running members and keeps their real events", "[tracer][group]") {
    std::string prog = program("tracer_counter");
    auto a = process::launch(prog, {});
    auto b = process::launch(prog, {});
    process_group g;
    g.add(*a);
    g.add(*b);
    g.resume_all();
    CHECK(process_group::is_running(*a));
    auto kept = g.stop_all();
    CHECK_FALSE(process_group::is_running(*a));
    CHECK_FALSE(process_group::is_running(*b));
    for (auto& e : kept) {
        // Only events other than the interrupt itself come back (a library load at most).
        CHECK(e.why.kind != stop_kind::interrupted);
    }
    CHECK(a->is_alive());
    CHECK(b->is_alive());
}

TEST_CASE("process_group::start_step: the step's end is a member's stop, the breakpoint it left stays planted",
          "[tracer][group]") {
    std::string prog = program("tracer_calls");
    temp_file out;
    launch_options o;
    o.stdout_path = out.path;
    auto p = process::launch(prog, {"3"}, o);
    std::uint64_t bias = 0;
    for (auto& m : p->modules()) {
        if (m.is_executable) {
            bias = m.load_bias;
        }
    }
    std::uint64_t tick = nm_address(prog, "tick") + bias;
    p->add_breakpoint_site(virt_addr(tick));
    process_group g;
    g.add(*p);
    g.resume_all();
    auto hit = wait_group(g);
    REQUIRE(hit.why.kind == stop_kind::breakpoint);
    REQUIRE(process_group::start_step(*p, hit.why.tid));
    CHECK(process_group::is_running(*p));
    auto stepped = wait_group(g);
    CHECK(stepped.why.kind == stop_kind::single_step);
    CHECK(stepped.why.tid == hit.why.tid);
    std::uint64_t pc = p->find_thread(hit.why.tid)->regs().pc();
    CHECK(pc > tick);
    CHECK(pc < tick + 16);
    // The int3 under the stepped pc is back: the next two calls hit it, then the exit.
    int hits = 1;
    for (;;) {
        g.resume_all();
        auto e = wait_group(g);
        if (e.why.kind != stop_kind::breakpoint) {
            CHECK(e.why.kind == stop_kind::exited);
            CHECK(e.why.exit_code == 7);
            break;
        }
        ++hits;
    }
    CHECK(hits == 3);
}

TEST_CASE("process_group::start_step: a step blocked in a system call is ended by interrupt(), and no stale trap "
          "follows when the process runs on",
          "[tracer][group]") {
    auto p = process::launch("/bin/sleep", {"30"});
    // No stop within `ms` but the loader's library events, resumed over.
    auto quiet = [](process_group& g, int ms) {
        for (;;) {
            auto e = g.wait_any(ms);
            if (!e) {
                return true;
            }
            if (e->why.kind != stop_kind::library_event) {
                return false;
            }
            e->proc->resume();
        }
    };
    process_group g;
    g.add(*p);
    g.resume_all();
    CHECK(quiet(g, 300));   // asleep in nanosleep
    g.interrupt();
    auto first = wait_group(g);
    REQUIRE(first.why.kind == stop_kind::interrupted);
    pid_t tid = p->pid();
    REQUIRE(process_group::start_step(*p, tid));
    CHECK(quiet(g, 300));   // the restarted call goes on sleeping: no step's end yet
    g.interrupt();
    auto second = wait_group(g);
    CHECK(second.why.kind == stop_kind::interrupted);
    // Run on: the SIGTRAP the kernel may have queued for the interrupted step is not a stop.
    g.resume_all();
    CHECK(quiet(g, 300));
    p->kill();
}

TEST_CASE("MPIR: mpirun is run to MPIR_Breakpoint and its proctable names every rank", "[tracer][mpi]") {
    std::string prog = std::string(ompdbg::test::examples_dir) + "/mpi/mpi_stages";
    REQUIRE(std::filesystem::exists(mpirun_path()));   // scripts/bootstrap builds it
    REQUIRE(std::filesystem::exists(prog));
    temp_file out;
    launch_options opts;
    opts.stdout_path = out.path;
    opts.env = {"OMPI_MPIR_DO_NOT_WARN=1"};
    auto starter = process::launch(mpirun_path(), {"--allow-run-as-root", "--oversubscribe", "-np", "4", prog}, opts);
    auto iface = mpir::run_to_spawn(*starter);
    CHECK(iface.debug_state(*starter) == mpir::debug_spawned);
    auto table = iface.proctable(*starter);
    REQUIRE(table.size() == 4);
    std::vector<std::unique_ptr<process>> ranks;
    process_group g;
    for (auto& d : table) {
        CHECK(std::filesystem::path(d.executable_name).filename() == "mpi_stages");
        CHECK(!d.host_name.empty());
        ranks.push_back(process::attach(d.pid));
        g.add(*ranks.back());
    }
    // Ranks are held in MPI_Init: none printed its line yet.
    CHECK(out.contents().find("rank ") == std::string::npos);
    g.add(*starter);
    std::set<pid_t> exited;
    g.resume_all();
    while (exited.size() < 5) {
        auto e = wait_group(g, 60000);
        if (e.why.is_process_end()) {
            CHECK(e.why.kind == stop_kind::exited);
            CHECK(e.why.exit_code == 0);
            exited.insert(e.proc->pid());
            continue;
        }
        if (e.why.kind == stop_kind::breakpoint) {
            REQUIRE(e.proc == starter.get());   // MPIR_Breakpoint again at job end
        }
        e.proc->resume();
    }
    // Ground truth: every rank printed its own pid; it matches the proctable entry.
    std::string text = out.contents();
    for (auto& d : table) {
        CHECK(text.find("rank " + std::to_string(d.rank) + " of 4 pid " + std::to_string(d.pid) + "\n") !=
              std::string::npos);
    }
}

TEST_CASE("MPIR: a program that is not an MPI starter is named as such", "[tracer][mpi]") {
    auto p = process::launch(program("tracer_calls"), {});
    CHECK_THROWS_WITH(mpir::run_to_spawn(*p), Catch::Contains("is not an MPI starter"));
}
