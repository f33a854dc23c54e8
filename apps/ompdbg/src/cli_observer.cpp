#include "cli_observer.hpp"

#include <string>

#include <fmt/format.h>

#include "ompdbg/debugger/mpi/job_events.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/omp/ompd_events.hpp"
#include "ompdbg/debugger/run/signal_names.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/tracer/stop_reason.hpp"

namespace ompdbg::app {

void cli_observer::symbols_read(const std::filesystem::path& program, bool has_debug_info) {
    if (!batch_) {
        out_.line(fmt::format("Reading symbols from {}...", program.string()));
    }
    if (!has_debug_info) {
        out_.line(fmt::format("(No debugging symbols found in {})", program.string()));
    }
}

void cli_observer::warning(std::string_view text) {
    out_.line(fmt::format("warning: {}", text));
}

void cli_observer::expression_warning(std::string_view text) {
    out_.error("warning: " + std::string(text));
}

void cli_observer::remote_file_fetch(const std::string& host, const std::filesystem::path& host_path) {
    // gdb's words, before the transfer. An event, not a line of the command's text: the DAP
    // server shows each as an `output` event (console), --json as a "remote-file" object.
    out_.event("remote-file", {{"path", host_path.string()}, {"host", host}},
               fmt::format("Reading {} from remote target...", host_path.string()));
}

void cli_observer::agent_unused(std::string_view why) {
    out_.line(fmt::format("Fast breakpoints: {}; conditions are evaluated by the debugger at each stop.", why));
}

void cli_observer::agent_loaded(const std::filesystem::path& agent, pid_t pid) {
    out_.line(fmt::format("Fast breakpoints: loaded the agent {} into process {}.", agent.string(), pid));
}

void cli_observer::error(std::string_view text) {
    out_.error(text);
}

void cli_observer::thread_created(pid_t tid, int number, const std::string& target_id) {
    out_.event("thread-created", {{"thread", number}, {"lwp", tid}}, fmt::format("[New {}]", target_id));
}

void cli_observer::thread_exited(pid_t tid, const std::string& target_id) {
    out_.event("thread-exited", {{"lwp", tid}}, fmt::format("[{} exited]", target_id));
}

void cli_observer::signal_passed(pid_t, int number, int signo) {
    out_.event("signal", {{"thread", number}, {"signal", debugger::signal_name(signo)}, {"stop", false}},
               fmt::format("\nProgram received signal {}, {}.", debugger::signal_name(signo),
                           debugger::signal_description(signo)));
}

void cli_observer::process_exec(pid_t pid, const std::filesystem::path& program) {
    out_.event("exec", {{"pid", pid}}, fmt::format("process {} is executing new program: {}", pid, program.string()));
}

void cli_observer::fork_child_released(pid_t child, bool vfork) {
    const char* how = vfork ? "vfork" : "fork";
    out_.event("fork-child-detached", {{"pid", child}, {"how", how}},
               fmt::format("[Detaching after {} from child process {}]", how, child));
}

void cli_observer::fork_followed(pid_t parent, const std::string& parent_thread, pid_t child, bool vfork) {
    out_.event("fork-followed", {{"parent", parent}, {"child", child}},
               fmt::format("[Attaching after {} {} to child process {}]", parent_thread, vfork ? "vfork" : "fork", child));
}

void cli_observer::inferior_added(int number, pid_t pid) {
    out_.event("inferior-added", {{"inferior", number}, {"pid", pid}},
               fmt::format("[New inferior {} (process {})]", number, pid));
}

void cli_observer::fork_parent_detached(pid_t pid) {
    out_.event("fork-detached", {{"pid", pid}}, fmt::format("[Detaching after fork from parent process {}]", pid));
}

void cli_observer::watchpoint_dropped(int number, std::string_view error) {
    out_.error(fmt::format("Could not insert watchpoint {}: {}", number, error));
}

void cli_observer::vfork_parent_detached(pid_t pid, std::string_view how) {
    out_.event("vfork-parent-detached", {{"pid", pid}, {"after", std::string(how)}},
               fmt::format("[Detaching vfork parent process {} after child {}]", pid, how));
}

void cli_observer::inferior_detached(int number, pid_t pid) {
    out_.event("detached", {{"pid", pid}}, fmt::format("[Inferior {} (process {}) detached]", number, pid));
}

void cli_observer::ompd_loaded(const debugger::ompd_library_loaded& lib) {
    out_.event("ompd-library",
               {{"path", lib.path},
                {"source", lib.source},
                {"api_version", lib.api_version},
                {"version_string", lib.version_string}},
               fmt::format("[OMPD library {} ({}), {}]", lib.path, lib.version_string, lib.source));
}

void cli_observer::ompd_unavailable(std::string_view problem) {
    out_.error(std::string("warning: OMPD: ") + std::string(problem));
}

void cli_observer::target_lines(std::string_view text) {
    out_.flush();   // what is buffered goes first, on its own
    out_.partial(text);
    out_.flush();
}

void cli_observer::job_error(std::string_view text) {
    out_.error(text);
}

void cli_observer::job_aborted(const std::string& message, std::size_t stopped_ranks, const std::string& starter) {
    out_.event("mpi2dd", {{"debug_state", "ABORT"}, {"message", message}, {"stopped_ranks", stopped_ranks}},
               fmt::format("[MPI2DD ABORT: {}]\n[Every rank of the job is stopped ({} ranks); `continue` lets {} "
                           "end the job.]",
                           message, stopped_ranks, starter));
}

// Each rank's output comes in turns: its label is printed (lazily, as the header of its
// first line) only when another rank printed since. JSON events name the rank.
void cli_observer::rank_turn(const debugger::inferior& rank, bool labelled) {
    if (labelled && labelled_ != &rank) {
        out_.set_header(fmt::format("[rank {}]", rank.rank));
    }
    out_.set_event_fields({{"rank", rank.rank}});
}

void cli_observer::rank_turn_ended(const debugger::inferior& rank) {
    out_.set_event_fields({});
    if (out_.header_pending()) {
        out_.set_header({});
    } else {
        labelled_ = &rank;
    }
}

void cli_observer::rank_steps_ended() {
    out_.set_header({});
    labelled_ = nullptr;
}

// A rank's stop on `continue`: its label first, its JSON events name it.
void cli_observer::rank_stop(const debugger::inferior& rank) {
    out_.line(fmt::format("[rank {}]", rank.rank));
    out_.set_event_fields({{"rank", rank.rank}});
}

void cli_observer::rank_stop_ended(const debugger::inferior&) {
    out_.set_event_fields({});
}

void cli_observer::rank_error(const debugger::inferior& rank, std::string_view text) {
    out_.error(fmt::format("[rank {}] {}", rank.rank, text));
}

void cli_observer::job_warning(std::string_view text) {
    out_.error("warning: " + std::string(text));
}

void cli_observer::job_tasks_waiting(const debugger::pending_tasks& p) {
    out_.line(fmt::format("Waiting for {} (process {}) to start its MPI job's tasks: {} of {} started...", p.starter,
                          p.pid, p.started, p.size));
    out_.flush();
}

void cli_observer::job_starter_launched(pid_t pid) {
    out_.field("pid", pid);
}

void cli_observer::job_interface_chosen(const std::string& starter) {
    out_.event("mpi-interface", {{"interface", "MPI2DD"}, {"also", "MPIR"}},
               fmt::format("[{} offers MPI2DD and MPIR: using MPI2DD]", starter));
}

void cli_observer::job_acquired(const debugger::acquired_job& j) {
    if (!j.mpi2dd) {
        out_.event("mpi-job", {{"ranks", j.ranks}, {"executable", j.executable}},
                   fmt::format("[MPI job: {} ranks of {} acquired]", j.ranks, j.executable));
        return;
    }
    // JSON: the processes as the tables name them, and the directories that list them.
    nlohmann::json procs = nlohmann::json::array();
    for (auto& p : j.processes) {
        procs.push_back({{"rank", p.rank},
                         {"pid", p.pid},
                         {"comm_world", p.comm_world},
                         {"world_rank", p.world_rank},
                         {"listed_by", p.listed_by}});
    }
    std::size_t dirs = j.directory_pids.size();
    out_.event("mpi-job",
               {{"ranks", j.ranks}, {"executable", j.executable}, {"interface", "MPI2DD"}, {"starter", j.starter_pid},
                {"directories", dirs}, {"processes", procs}, {"directory_pids", j.directory_pids}},
               fmt::format("[MPI job: {} ranks of {} acquired through MPI2DD from {} (pid {}){}]", j.ranks,
                           j.executable, j.starter, j.starter_pid,
                           dirs ? fmt::format(", {} directory processes", dirs) : std::string()));
}

void cli_observer::job_tables_changed(const debugger::mpi2dd_tables_changed& e) {
    nlohmann::json fields = {{"debug_state", e.debug_state},
                             {"process", e.raised_by},
                             {"new_ranks", e.new_ranks},
                             {"pids", e.pids},
                             {"new_directories", e.new_directories}};
    if (e.unreadable) {
        fields["warning"] = *e.unreadable;
    }
    if (e.listed_processes) {
        fields["listed_processes"] = *e.listed_processes;
    }
    if (e.listed_directories) {
        fields["listed_directories"] = *e.listed_directories;
    }
    if (e.new_ranks.empty()) {
        // A directory whose table only shrank (the flat starter is a directory: one
        // DIRECTORY_CHANGED per rank that ends) is not news to a user, who has seen the
        // rank end: that event has a JSON form only (no text).
        std::string text;
        if (!e.new_directories.empty()) {
            std::string pids;
            for (pid_t p : e.new_directories) {
                pids += fmt::format("{}{}", pids.empty() ? "" : ", ", p);
            }
            text = fmt::format("[MPI2DD {} in process {}: new directory process{} {}]", e.debug_state, e.raised_by,
                               e.new_directories.size() == 1 ? "" : "es", pids);
        }
        out_.event("mpi2dd", fields, text);
        return;
    }
    fields["comm_world"] = e.comm_world;
    fields["in_focus"] = e.in_focus;
    std::string origin;
    if (e.parent) {
        fields["parent"] = {{"comm_world", e.parent->comm_world}, {"rank", e.parent->rank}, {"sequence", e.parent->sequence}};
        origin = fmt::format(" spawned by rank {} of {} (spawn {})", e.parent->rank, e.parent->comm_world,
                             e.parent->sequence);
    }
    std::size_t n = e.new_ranks.size();
    out_.event("mpi2dd", fields,
               fmt::format("[MPI2DD {}: {} new process{} of {}{}: rank {}{}]", e.debug_state, n, n == 1 ? "" : "es",
                           e.comm_world, origin, debugger::format_rank_list(e.new_ranks),
                           e.in_focus ? "" : " (not in the focus: `rank all` includes them)"));
}

void cli_observer::job_ended(std::size_t ranks, bool killed) {
    out_.event(killed ? "mpi-job-killed" : "mpi-job-detached", {{"ranks", ranks}},
               fmt::format("[MPI job: {} ranks {}]", ranks, killed ? "killed" : "detached"));
}

void cli_observer::rank_ended(const debugger::inferior& inf, const tracer::stop_reason& why) {
    std::string label = fmt::format("[rank {}]", inf.rank);
    if (why.connection_lost) {
        out_.event("rank-lost", {{"rank", inf.rank}, {"pid", inf.pid}, {"host", inf.host}, {"reason", why.lost_reason}},
                   fmt::format("{} process {} on host {} is lost: {}", label, inf.pid, inf.host, why.lost_reason));
        return;
    }
    std::string text = why.kind == tracer::stop_kind::exited
                           ? fmt::format("{} process {} exited with code {:02o}", label, inf.pid, why.exit_code)
                           : fmt::format("{} process {} was killed by signal {}, {}", label, inf.pid,
                                         debugger::signal_name(why.signo), debugger::signal_description(why.signo));
    out_.event(why.kind == tracer::stop_kind::exited ? "rank-exited" : "rank-terminated",
               {{"rank", inf.rank}, {"pid", inf.pid}, {"exit_code", why.exit_code}, {"signal", why.signo}}, text);
}

void cli_observer::starter_ended(const std::string& starter, const tracer::stop_reason& why) {
    out_.event("starter-exited", {{"exit_code", why.exit_code}, {"signal", why.signo}},
               why.kind == tracer::stop_kind::exited
                   ? fmt::format("[{} exited with code {:02o}]", starter, why.exit_code)
                   : fmt::format("[{} was killed by signal {}]", starter, debugger::signal_name(why.signo)));
}

}  // namespace ompdbg::app
