// The model's run control without a front end (run/run_control.hpp, run/fork_follow.hpp):
// a plain debugger::session, with an observer that records what it hears, runs real
// programs under real ptrace with resume_and_wait. Threads that appear and exit, a fork
// child let go or followed, and an interrupt from another thread arrive as observer calls
// and stops, with no command and no text.

#include <catch2/catch.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ompdbg/debugger/run/fork_follow.hpp"
#include "ompdbg/debugger/run/run_control.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/session/session_observer.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg_test_paths.hpp"

using namespace ompdbg;
using namespace ompdbg::debugger;

namespace {

std::filesystem::path example(const char* name) {
    return std::filesystem::path(ompdbg::test::examples_dir) / name;
}

/// Keeps what run control tells a front end.
struct recording_observer final : session_observer {
    std::vector<std::tuple<pid_t, int, std::string>> created;
    std::vector<pid_t> exited;
    std::vector<std::pair<pid_t, bool>> released;
    std::vector<std::pair<pid_t, pid_t>> followed;
    std::vector<std::pair<int, pid_t>> added;
    std::vector<pid_t> parents_detached;
    std::vector<std::string> errors;
    void thread_created(pid_t tid, int number, const std::string& target_id) override {
        created.emplace_back(tid, number, target_id);
    }
    void thread_exited(pid_t tid, const std::string&) override { exited.push_back(tid); }
    void fork_child_released(pid_t child, bool vfork) override { released.emplace_back(child, vfork); }
    void fork_followed(pid_t parent, const std::string&, pid_t child, bool) override {
        followed.emplace_back(parent, child);
    }
    void inferior_added(int number, pid_t pid) override { added.emplace_back(number, pid); }
    void fork_parent_detached(pid_t pid) override { parents_detached.push_back(pid); }
    void error(std::string_view text) override { errors.emplace_back(text); }
};

/// Launches `program` with `args` in `s`, stopped at its first instruction; its output
/// goes to /dev/null.
pid_t launch(session& s, const std::filesystem::path& program, std::vector<std::string> args) {
    REQUIRE(std::filesystem::exists(program));
    s.set_program(program, args);
    tracer::launch_options opts;
    opts.stdout_path = "/dev/null";
    opts.elves = s.elf_provider();
    s.set_process(tracer::process::launch(program, args, opts));
    return s.process()->pid();
}

}  // namespace

TEST_CASE("run control: resume_and_wait reports each thread's creation (and exits) to the observer and returns "
          "the process's exit",
          "[run]") {
    recording_observer obs;
    session s;
    s.set_observer(obs);
    const pid_t pid = launch(s, example("threads"), {"3"});
    auto why = resume_and_wait(s);
    CHECK(why.kind == tracer::stop_kind::exited);
    CHECK(why.exit_code == 0);
    CHECK(obs.errors.empty());
    REQUIRE(obs.created.size() == 3);
    std::set<pid_t> tids;
    std::set<int> numbers;
    for (const auto& [tid, number, id] : obs.created) {
        CHECK(tid != pid);
        CHECK(id.find(std::to_string(tid)) != std::string::npos);   // "Thread 0x... (LWP TID)"
        tids.insert(tid);
        numbers.insert(number);
    }
    CHECK(tids.size() == 3);
    CHECK(numbers == std::set<int>{2, 3, 4});   // gdb's numbers: the main thread is 1
    // The exits the tracer saw before the process ended (as gdb, not necessarily each).
    for (pid_t tid : obs.exited) {
        CHECK(tids.count(tid) == 1);
    }
}

TEST_CASE("run control: a fork child is let go and reported, or followed with follow-fork-mode child inside a "
          "follow_forks_scope",
          "[run]") {
    SECTION("let go (the default)") {
        recording_observer obs;
        session s;
        s.set_observer(obs);
        launch(s, example("procs"), {"fork"});
        auto why = resume_and_wait(s);
        CHECK(why.kind == tracer::stop_kind::exited);
        CHECK(why.exit_code == 0);
        REQUIRE(obs.released.size() == 1);
        CHECK(obs.released[0].first > 0);
        CHECK_FALSE(obs.released[0].second);
        CHECK(obs.added.empty());
    }
    SECTION("followed: the child becomes inferior 2 and the parent is detached") {
        recording_observer obs;
        session s;
        s.set_observer(obs);
        const pid_t parent = launch(s, example("procs"), {"fork"});
        s.process_events().follow_child = true;
        follow_forks_scope following(s);
        auto why = resume_and_wait(s);
        CHECK(why.kind == tracer::stop_kind::exited);
        CHECK(why.exit_code == 7);   // the child's
        REQUIRE(obs.followed.size() == 1);
        CHECK(obs.followed[0].first == parent);
        const pid_t child = obs.followed[0].second;
        CHECK(child != parent);
        CHECK(obs.added == std::vector<std::pair<int, pid_t>>{{2, child}});
        CHECK(obs.parents_detached == std::vector<pid_t>{parent});
        CHECK(current_inferior_number(s) == 2);
        CHECK(obs.released.empty());
    }
}

TEST_CASE("run control: interrupt_running_process stops the process being waited for, as a DAP pause would",
          "[run]") {
    recording_observer obs;
    session s;
    s.set_observer(obs);
    launch(s, example("counter"), {});
    (void)take_interrupt_request();
    std::thread pauser([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        interrupt_running_process();
    });
    auto why = resume_and_wait(s);
    pauser.join();
    CHECK(why.kind == tracer::stop_kind::interrupted);
    CHECK(s.process()->is_alive());
    CHECK(take_interrupt_request());
    CHECK_FALSE(take_interrupt_request());
    s.end_target();
}
