// What a stop means, decided by the model without a front end (run/stop_decision.hpp): a
// plain debugger::session launches a program under ptrace and, at each stop, decide_stop
// says what the user would be shown: a breakpoint hit (with the hit counts kept once) or a
// breakpoint whose condition is false (not for the user), a signal (and `handle SIG
// nopass` keeps it from the program), the program's end with $_exitcode or $_exitsignal.

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "ompdbg/debugger/breakpoints/breakpoint_edits.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::string target(const char* name) { return std::string(ompdbg::test::targets_dir) + "/tracer/" + name; }

/// Launches tracer program `name` with `args`, its stdout to `out`, without the agent.
void launch(session& s, const std::string& name, const std::vector<std::string>& args, const std::string& out) {
    s.settings().breakpoint_fast = false;
    s.set_program(target(name.c_str()), args);
    tracer::launch_options opts;
    opts.stdout_path = out;
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(target(name.c_str()), args, opts));
}

/// Resumes and decides the next stop that is not a library or thread event (those are
/// run control's, reported to the observer and passed over).
stop_report next_stop(session& s) {
    while (true) {
        auto& p = s.require_process();
        s.on_resume();
        p.resume();
        auto why = p.wait_for_stop();
        if (why.kind == tracer::stop_kind::library_event || why.kind == tracer::stop_kind::thread_created ||
            why.kind == tracer::stop_kind::thread_exited) {
            continue;
        }
        return decide_stop(s, why);
    }
}

/// The int held by convenience variable $NAME; nullopt while it is void.
std::optional<int> convenience_int(session& s, const char* name) {
    frame_context ctx(s);
    auto v = ctx.convenience(name);
    if (!v) {
        return std::nullopt;
    }
    REQUIRE(v->bytes.size() == sizeof(int));
    int n = 0;
    std::memcpy(&n, v->bytes.data(), sizeof n);
    return n;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("decide_stop: a breakpoint whose condition is false is not for the user, one that holds is a hit counted "
          "once, and the exit is the process's end with $_exitcode",
          "[run][stops]") {
    REQUIRE(std::filesystem::exists(target("tracer_calls")));
    session s;
    launch(s, "tracer_calls", {"3"}, "/dev/null");
    const pid_t pid = s.require_process().pid();
    breakpoint_request r;
    r.spec = "tick";
    r.condition = "ticks == 1";
    std::string why;
    breakpoint bp = make_breakpoint(s, r, why);
    REQUIRE_FALSE(bp.pending);
    const int n = add_breakpoint(s, std::move(bp));

    // tick() with ticks == 0: a breakpoint stop nobody is shown.
    auto first = next_stop(s);
    CHECK(first.kind == stop_class::breakpoint_hit);
    CHECK_FALSE(first.breakpoint.stops());
    CHECK_FALSE(first.for_user());
    CHECK(s.breakpoints().at(n).hit_count == 0);

    // ticks == 1: the hit, in tick, at the breakpoint's address; counted once.
    auto hit = next_stop(s);
    CHECK(hit.kind == stop_class::breakpoint_hit);
    CHECK(hit.for_user());
    CHECK(hit.breakpoint.stopping == std::vector<int>{n});
    CHECK(hit.tid == pid);
    const auto& frames = s.stack(hit.tid);
    REQUIRE_FALSE(frames.empty());
    REQUIRE(frames.front().function);
    CHECK(frames.front().function->name == "tick");
    CHECK(hit.pc == frames.front().pc());
    CHECK(s.breakpoints().at(n).hit_count == 1);

    CHECK_FALSE(next_stop(s).for_user());   // ticks == 2
    auto end = next_stop(s);
    CHECK(end.kind == stop_class::process_ended);
    CHECK(end.for_user());
    CHECK(end.why.kind == tracer::stop_kind::exited);
    CHECK(end.why.exit_code == 7);
    CHECK(end.pid == pid);
    CHECK(s.process() != nullptr);   // the front end shows the end, then drops the process
    s.drop_process();
    CHECK(convenience_int(s, "_exitcode") == 7);
    CHECK_FALSE(convenience_int(s, "_exitsignal").has_value());
    CHECK(s.breakpoints().at(n).hit_count == 1);
}

TEST_CASE("decide_stop: raise(SIGUSR1) and a null dereference are signal stops, `handle SIGUSR1 nopass` keeps the "
          "signal from the program, SIGSEGV passed kills it, with $_exitsignal",
          "[run][stops]") {
    REQUIRE(std::filesystem::exists(target("tracer_signals")));
    const std::string out = (std::filesystem::temp_directory_path() /
                             ("stop_decision_" + std::to_string(::getpid()) + ".out")).string();
    session s;
    signal_row* usr1 = s.signals().find("SIGUSR1");
    REQUIRE(usr1 != nullptr);
    usr1->pass = false;
    launch(s, "tracer_signals", {}, out);
    const pid_t pid = s.require_process().pid();

    auto raised = next_stop(s);
    CHECK(raised.kind == stop_class::signal);
    CHECK(raised.for_user());
    CHECK(raised.tid == pid);
    CHECK(raised.why.signo == SIGUSR1);
    CHECK(s.require_process().pending_signal(pid) == 0);   // nopass: not delivered on resume

    auto segv = next_stop(s);
    CHECK(segv.kind == stop_class::signal);
    CHECK(segv.why.signo == SIGSEGV);
    CHECK(s.require_process().pending_signal(pid) == SIGSEGV);   // passed by default
    const auto& frames = s.stack(segv.tid);
    REQUIRE_FALSE(frames.empty());
    REQUIRE(frames.front().function);
    CHECK(frames.front().function->name == "main");

    auto end = next_stop(s);
    CHECK(end.kind == stop_class::process_ended);
    CHECK(end.why.kind == tracer::stop_kind::terminated);
    CHECK(end.why.signo == SIGSEGV);
    CHECK(end.pid == pid);
    s.drop_process();
    CHECK(convenience_int(s, "_exitsignal") == SIGSEGV);
    CHECK_FALSE(convenience_int(s, "_exitcode").has_value());
    // The handler never ran: the program printed nothing.
    CHECK(read_file(out).find("usr1") == std::string::npos);
    std::filesystem::remove(out);
}
