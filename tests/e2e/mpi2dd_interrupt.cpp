// Ctrl-C while a hierarchical MPI2DD job runs (directory processes traced along with the
// ranks): ompdbg stops the job and its prompt answers; `kill` or `quit` then leaves no
// process of the job behind (checked in /proc, on the pids the processes print about
// themselves and the directory pids `mpi directories` lists).

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <set>
#include <thread>

#include "mpi2dd_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;
using namespace ompdbg::test::mpi2dd;

namespace {

constexpr auto step = std::chrono::seconds(60);
const std::regex prompt_re(R"(\(ompdbg\) $)");

/// /proc/PID/stat's start time (field 22), or 0 when there is no such process.
unsigned long long start_time(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && rest >> field; ++i) {
        if (i == 22) {
            return std::stoull(field);
        }
    }
    return 0;
}

/// Whether the process that had `started` as its start time still exists (not even a
/// zombie), waiting up to `patience` for it to go.
bool still_there(pid_t pid, unsigned long long started, std::chrono::seconds patience) {
    auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        if (start_time(pid) != started) {
            return false;   // gone (or the pid reused by another process)
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));   // polling /proc, not synchronising
    }
}

}  // namespace

TEST_CASE("mpi2dd: Ctrl-C stops a hierarchical job, the prompt answers, kill or quit leaves no process",
          "[e2e][mpi2dd]") {
    bool quit = GENERATE(false, true);
    background_process dbg({ompdbg_binary, "run", starter(), "--dirs", "2", "-np", "4", app(), "--forever"});
    // Every rank runs (it says so) before the interrupt.
    std::vector<self_report> ranks;
    for (int i = 0; i < 4; ++i) {
        REQUIRE(dbg.wait_for_line(std::regex("^MPI2DD-LOG rank=\\d+ world=\\S+ running$"), step));
    }
    for (auto& l : dbg.consumed_lines()) {
        for (auto& r : reports(l)) {
            ranks.push_back(r);
        }
    }
    REQUIRE(ranks.size() == 4);
    dbg.send_signal(SIGINT);   // what the terminal does on Ctrl-C
    auto stop = dbg.wait_for_output(std::regex(R"(Program received signal SIGINT[\s\S]*\(ompdbg\) $)"), step);
    INFO(dbg.stderr_text());
    REQUIRE(stop);
    // The prompt answers: every rank is stopped, the directories are listed.
    dbg.write_stdin("mpi ranks\n");
    auto table = dbg.wait_for_output(prompt_re, step);
    REQUIRE(table);
    auto listed = rows(*table);
    REQUIRE(listed.size() == 4);
    for (auto& r : ranks) {
        REQUIRE(listed.count(r.pid));
        CHECK(listed[r.pid].state == "stopped");
    }
    dbg.write_stdin("mpi directories\n");
    auto dirs_text = dbg.wait_for_output(prompt_re, step);
    REQUIRE(dirs_text);
    std::set<pid_t> directories;
    std::regex dir_row(R"(^  (\d+)\s+DIR\|)");
    for (auto& l : lines_of(*dirs_text)) {
        std::smatch m;
        if (std::regex_search(l, m, dir_row)) {
            directories.insert(std::stoi(m[1]));
        }
    }
    std::set<pid_t> parents;
    for (auto& r : ranks) {
        parents.insert(r.ppid);
    }
    CHECK(directories == parents);   // the ranks' parents
    // Everything of the job, with the start time that identifies each process.
    std::map<pid_t, unsigned long long> job;
    pid_t starter_pid = 0;
    for (pid_t d : parents) {
        std::ifstream in("/proc/" + std::to_string(d) + "/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::istringstream rest(text.substr(text.rfind(')') + 2));
        char state = 0;
        rest >> state >> starter_pid;
    }
    REQUIRE(starter_pid > 0);
    for (pid_t p : parents) {
        job[p] = start_time(p);
    }
    for (auto& r : ranks) {
        job[r.pid] = start_time(r.pid);
    }
    job[starter_pid] = start_time(starter_pid);
    for (auto& [pid, started] : job) {
        INFO("pid " << pid);
        CHECK(started != 0);   // all there while stopped
    }
    if (quit) {
        dbg.write_stdin("quit\n");
    } else {
        dbg.write_stdin("kill\n");
        auto killed = dbg.wait_for_output(prompt_re, step);
        REQUIRE(killed);
        CHECK(killed->find("[MPI job: 4 ranks killed]") != std::string::npos);
        dbg.close_stdin();
    }
    auto end = dbg.wait_exit(step);
    REQUIRE(end);
    CHECK(end->exit_code == 0);
    for (auto& [pid, started] : job) {
        INFO("pid " << pid << " is left behind");
        CHECK_FALSE(still_there(pid, started, std::chrono::seconds(30)));
    }
}
