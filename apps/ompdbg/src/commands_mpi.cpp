// MPI jobs: acquisition through MPIR, one inferior per rank, the rank focus, job-wide
// continue and the merged stack tree (`mpi stacks`, as STAT prints it). Rank lists
// (`rank 0-3,6`, `break ... rank N`) are in mpi_rank_lists.cpp.

#include "commands_mpi.hpp"
#include "command_args.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "commands_mpi2dd.hpp"
#include "cli_stop_reporter.hpp"
#include "commands_omp.hpp"
#include "ompdbg/debugger/breakpoints/fast_breakpoints.hpp"
#include "mpi_step.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "run_control.hpp"
#include "session.hpp"
#include "frame_line.hpp"
#include "stack_tree.hpp"
#include "stop_printer.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/mpi/merged_stacks.hpp"
#include "ompdbg/debugger/mpi/rank_focus.hpp"

namespace ompdbg::app {

namespace {

std::string rank_label(const inferior& inf) {
    return fmt::format("[rank {}]", inf.rank);
}

/// `continue`'s stops as gdb shows them; a stop whose breakpoint commands resume
/// (`continue` among them) is declined, so the job runs again. The breakpoint `commands`
/// loop stays the CLI's (bp_commands_state).
class job_continue_reporter final : public debugger::stop_reporter {
public:
    explicit job_continue_reporter(session& s) : s_(s), steps_(s) {}
    bool stop(const tracer::stop_reason& why) override {
        auto& st = s_.bp_commands_state();
        st.resume_requested = false;
        bool shown = report_stop(s_, why);
        if (!shown || (st.resume_requested && !st.in_breakpoint_commands)) {
            st.resume_requested = false;
            return false;
        }
        return true;
    }
    bool breakpoint_hit(pid_t tid, std::uint64_t pc) override { return report_breakpoint_hit(s_, tid, pc); }
    void step_ended(pid_t tid, bool frame_line) override { steps_.step_ended(tid, frame_line); }
    void run_on() override { steps_.run_on(); }
    void stepping_until_exit(std::string_view function) override { steps_.stepping_until_exit(function); }
    void finishing(const debugger::stack_frame& f) override { steps_.finishing(f); }

private:
    session& s_;
    cli_stop_reporter steps_;
};

}  // namespace

job_options cli_job_options(session& s, bool launching) {
    job_options opts;
    if (launching) {
        // LD_PRELOAD of the fast-breakpoint agent: a starter hands its environment to the
        // ranks it starts on this host, so their conditions are evaluated in them.
        opts.env = agent_launch_environment(s, omp_launch_environment({}));
        // stdout carries only JSON objects (docs/json.md): the job writes to stderr.
        opts.output_to_stderr = s.out().is_json();
    }
    return opts;
}

bool is_mpi_session(session& s) {
    return s.job() != nullptr;
}

void for_each_focused_rank(session& s, bool label, const std::function<void(inferior&)>& fn) {
    bool labelled = label && s.focus().size() > 1;
    debugger::for_each_focused_rank(s, [&](inferior& inf) {
        if (labelled) {
            s.out().line(rank_label(inf));
        }
        fn(inf);
    });
}

bool is_job_wide_command(const std::string& name, std::string_view args) {
    static const std::set<std::string> once = {
        "run", "start", "continue", "kill", "detach", "attach", "quit", "mpi", "rank", "break", "tbreak",
        "delete", "disable", "enable", "condition", "commands", "ignore", "help", "echo", "set", "show",
        "file", "catch", "source", "shell", "define", "end", "interrupt", "omp", "list", "handle", "inferior",
        "document", "if", "while"};
    std::string a = trim_copy(args);
    auto first = a.substr(0, a.find_first_of(" \t"));
    if (name == "set" && (first == "var" || first == "variable")) {
        return false;   // a variable of each rank
    }
    if (name == "info" && !first.empty()) {
        // Tables of the whole session, not of one rank's process.
        for (const char* whole : {"breakpoints", "inferiors", "signals", "handle"}) {
            if (std::string(whole).starts_with(first) && (first.size() >= 2 || first == "b")) {
                return true;
            }
        }
    }
    return once.count(name) > 0;
}

bool mpi_execute(session& s, const std::string& name, std::string_view args, const std::function<void()>& handler) {
    if ((name == "detach" || name == "kill") && is_mpi_session(s)) {
        if (name == "kill" && !s.query("Kill the program being debugged? ")) {
            error::send("Not confirmed.");
        }
        end_job(s, name == "kill");
        return true;
    }
    if (in_rank_step()) {
        handler();   // a breakpoint's commands during a rank's step: that rank only
        return true;
    }
    if (is_step_command(name) && is_mpi_session(s)) {
        return step_focus_together(s, handler);   // every focused rank steps at once
    }
    // A user command runs once: each command of its body is itself run per rank.
    if (is_job_wide_command(name, args) || s.script().user_commands.count(name) > 0) {
        handler();
        static const std::set<std::string> breakpoint_changes = {"break", "tbreak", "delete", "disable", "enable",
                                                                 "condition"};
        if (breakpoint_changes.count(name) && is_mpi_session(s)) {
            std::size_t saved = s.current_index();
            for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
                s.switch_to(i);
                sync_current_rank(s);
            }
            s.switch_to(saved);
            sync_current_rank(s);
        }
        return true;
    }
    bool ok = true;
    for_each_focused_rank(s, true, [&](inferior& inf) {
        try {
            if (s.focus().size() > 1 && (!inf.process || !inf.process->is_alive())) {
                return;   // an ended rank has nothing to show; `mpi ranks` says how it ended
            }
            sync_current_rank(s);
            handler();
        } catch (const std::exception& e) {
            ok = false;
            s.out().error(s.focus().size() > 1 ? std::string(e.what()) : fmt::format("{} {}", rank_label(inf), e.what()));
        }
    });
    return ok;
}

void mpi_continue_until_stop(session& s) {
    job_continue_reporter report(s);
    debugger::continue_job(s, report);
}

namespace {

void cmd_mpi_ranks(session& s, std::string_view) {
    if (!is_mpi_session(s)) {
        error::send("No MPI job is being debugged.");
    }
    if (s.job()->mpi2dd) {
        print_mpi2dd_ranks(s, *s.job());
        return;
    }
    std::set<std::size_t> focused(s.focus().begin(), s.focus().end());
    bool across_hosts = has_remote_ranks(s);
    if (across_hosts) {
        s.out().line(fmt::format("  {:<5} {:<16} {:<8} {:<10} {:<24} {}", "Rank", "Host", "PID", "State", "Reached through",
                                 "Executable"));
    } else {
        s.out().line(fmt::format("  {:<5} {:<16} {:<8} {:<10} {}", "Rank", "Host", "PID", "State", "Executable"));
    }
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
        auto& inf = *s.inferiors()[i];
        std::string state = rank_state(inf);
        std::string reached = reached_through(inf);
        if (across_hosts) {
            s.out().line(fmt::format("{} {:<5} {:<16} {:<8} {:<10} {:<24} {}", focused.count(i) ? "*" : " ", inf.rank,
                                     inf.host, inf.pid, state, reached.empty() ? "-" : reached, inf.executable.string()));
        } else {
            s.out().line(fmt::format("{} {:<5} {:<16} {:<8} {:<10} {}", focused.count(i) ? "*" : " ", inf.rank, inf.host,
                                     inf.pid, state, inf.executable.string()));
        }
        nlohmann::json row = {{"rank", inf.rank}, {"host", inf.host}, {"pid", inf.pid}, {"state", state},
                              {"executable", inf.executable.string()}, {"focused", focused.count(i) > 0},
                              {"reached", reached}};
        if (!inf.lost.empty()) {
            row["lost"] = inf.lost;
        }
        rows.push_back(std::move(row));
    }
    s.out().field("ranks", rows);
}

void cmd_rank(session& s, std::string_view args) {
    if (!is_mpi_session(s)) {
        error::send("No MPI job is being debugged.");
    }
    if (trim_copy(args).empty()) {
        std::vector<int> ranks;
        for (std::size_t i : s.focus()) {
            ranks.push_back(s.inferiors()[i]->rank);
        }
        s.out().line(fmt::format("Focus: rank {}.", format_rank_list(ranks)));
        return;
    }
    auto ranks = parse_rank_list(s, args);
    std::vector<std::size_t> focus;
    for (int r : ranks) {
        for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
            if (s.inferiors()[i]->rank == r) {
                focus.push_back(i);
            }
        }
    }
    s.focus() = focus;
    s.switch_to(focus.front());
    s.out().field("focus", ranks);
    s.out().line(fmt::format("Focus: rank {}.", format_rank_list(ranks)));
}

void cmd_mpi_attach(session& s, std::string_view args) {
    auto a = trim_copy(args);
    pid_t pid = parse_process_id(a);
    if (s.process() && s.process()->is_alive()) {
        error::send("A program is being debugged already.  Kill it first (\"kill\").");
    }
    auto proc = tracer::process::attach(pid, s.elf_provider());
    if (!attach_mpi2dd_job(s, proc, cli_job_options(s, false))) {
        attach_mpi_job(s, proc, true, cli_job_options(s, false));
    }
}

// ---- mpi stacks: STAT's merged prefix tree ----------------------------------------------

void cmd_mpi_stacks(session& s, std::string_view args) {
    if (!is_mpi_session(s)) {
        error::send("No MPI job is being debugged.");
    }
    std::string a = trim_copy(args);
    std::optional<std::string> dot_file;
    if (a.starts_with("--dot")) {
        dot_file = trim_copy(a.substr(5));
        if (dot_file->empty()) {
            error::send("Argument required (--dot FILE).");
        }
    } else if (!a.empty()) {
        error::send(fmt::format("Unknown argument \"{}\": mpi stacks [--dot FILE]", a));
    }
    stack_tree tree = merged_rank_stacks(s);
    std::vector<std::string> lines = stack_tree_lines(tree, stack_tree_tag::ranks);
    std::vector<int> all(tree.root().ranks.begin(), tree.root().ranks.end());
    s.out().line(fmt::format("Merged stacks of rank {} (every thread):", format_rank_list(all)));
    for (auto& l : lines) {
        s.out().line(l);
    }
    s.out().field("tree", lines);
    if (dot_file) {
        std::ofstream out(*dot_file);
        if (!out) {
            error::send(fmt::format("{}: {}.", *dot_file, std::strerror(errno)));
        }
        out << "digraph mpi_stacks {\n  node [shape=box];\n";
        write_stack_tree_dot(
            tree, out, "job",
            [](const stack_tree::node& n) {
                return fmt::format("{}:[{}]", n.ranks.size(), format_rank_list({n.ranks.begin(), n.ranks.end()}));
            },
            [](const stack_tree::node& n) { return std::to_string(n.ranks.size()); });
        out << "}\n";
        if (!out) {
            error::send(fmt::format("{}: write error.", *dot_file));
        }
        s.out().line(fmt::format("Graph written to {}.", *dot_file));
    }
}

}  // namespace

void register_mpi_commands(command_table& t) {
    auto& mpi = t.prefix("mpi", {}, "MPI job commands (ranks, stacks, message queues).");
    mpi.add({"ranks", {}, "List the ranks of the MPI job.",
             "mpi ranks\nEvery rank: number, host, pid, state (stopped, exited(N), signal) and executable; `*` marks "
             "the focus.",
             cmd_mpi_ranks, false, nullptr});
    mpi.add({"stacks", {}, "Merged stack tree of every thread of every focused rank (as STAT).",
             "mpi stacks [--dot FILE]\nThe stacks of every thread of every rank in the focus merged into one prefix "
             "tree, each branch labelled with its ranks; --dot FILE also writes it as a Graphviz graph.",
             cmd_mpi_stacks, false, nullptr});
    mpi.add({"attach", {}, "Attach to an MPI starter (mpirun) and every rank of its job.",
             "mpi attach PID\nLike `attach PID`, but PID must be an MPI starter whose job is running.", cmd_mpi_attach,
             false, nullptr});
    t.add({"rank", {}, "Set the ranks that commands apply to.",
           "rank [N | N-M,K,... | all]\nCommands that inspect (bt, print, info ...) run once per focused rank, "
           "labelled [rank N]; `break` plants in every rank; `continue` resumes every focused rank.",
           cmd_rank, false, nullptr});
}

}  // namespace ompdbg::app
