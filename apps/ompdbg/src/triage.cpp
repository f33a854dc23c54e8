// `ompdbg triage`: one look at a stuck OpenMP/MPI job. The engine (libdebugger's triage/:
// the samples, what moved between them, the verdict) returns a report; this file reads the
// arguments and prints the report (text, JSON, Graphviz).

#include "triage.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands_omp_state.hpp"
#include "session.hpp"
#include "stack_tree.hpp"
#include "stop_printer.hpp"
#include "ompdbg/debugger/mpi/message_queues.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/triage/triage_model.hpp"

namespace ompdbg::app {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace debugger::triage;

namespace {

/// What the command line asks: the engine's request, and how the report is rendered.
struct options {
    request req;
    std::optional<std::string> dot_file;
    bool json = false;
};

// ---- the report ---------------------------------------------------------------------

int parse_args(const std::vector<std::string>& args, options& o, std::string& problem) {
    auto need = [&](std::size_t& i) -> std::optional<std::string> {
        if (i + 1 >= args.size()) {
            problem = fmt::format("{} needs a value.", args[i]);
            return std::nullopt;
        }
        return args[++i];
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json") {
            o.json = true;
        } else if (a == "--core") {
            if (i + 2 >= args.size()) {
                problem = "--core needs the program and the core: ompdbg triage --core PROG CORE";
                return triage_usage;
            }
            o.req.core = std::make_pair(args[i + 1], args[i + 2]);
            i += 2;
        } else if (a == "--samples") {
            auto v = need(i);
            if (!v) {
                return triage_usage;
            }
            try {
                std::size_t used = 0;
                o.req.samples = std::stoi(*v, &used);
                if (used != v->size() || o.req.samples < 1 || o.req.samples > 1000) {
                    throw std::invalid_argument(*v);
                }
            } catch (const std::logic_error&) {
                problem = fmt::format("Invalid --samples \"{}\": a number of snapshots from 1 to 1000.", *v);
                return triage_usage;
            }
        } else if (a == "--interval") {
            auto v = need(i);
            if (!v) {
                return triage_usage;
            }
            try {
                std::size_t used = 0;
                o.req.interval = std::stod(*v, &used);
                if (used != v->size() || !(o.req.interval >= 0) || o.req.interval > 3600) {
                    throw std::invalid_argument(*v);
                }
            } catch (const std::logic_error&) {
                problem = fmt::format("Invalid --interval \"{}\": seconds between snapshots (0 to 3600).", *v);
                return triage_usage;
            }
        } else if (a == "--dot") {
            auto v = need(i);
            if (!v) {
                return triage_usage;
            }
            o.dot_file = *v;
        } else if (!a.empty() && a[0] != '-' && !o.req.pid && !o.req.core) {
            try {
                std::size_t used = 0;
                long p = std::stol(a, &used, 10);
                if (used != a.size() || p <= 0 || p > 0x3fffffff) {
                    throw std::invalid_argument(a);
                }
                o.req.pid = static_cast<pid_t>(p);
            } catch (const std::logic_error&) {
                problem = fmt::format("Illegal process-id: {}.", a);
                return triage_usage;
            }
        } else {
            problem = fmt::format("Unknown argument \"{}\".", a);
            return triage_usage;
        }
    }
    if (!o.req.pid && !o.req.core) {
        problem = "Argument required: ompdbg triage PID | --core PROG CORE [--samples N] [--interval S] "
                  "[--json] [--dot FILE]";
        return triage_usage;
    }
    if (o.req.pid && o.req.core) {
        problem = "Give a PID or --core PROG CORE, not both.";
        return triage_usage;
    }
    if (o.req.core) {
        o.req.samples = 1;   // a core does not move
    }
    return triage_nothing_wrong;
}

/// The label the trees show for a thread ("" for a thread that is not OpenMP's).
std::string thread_label(const thread_view& t) {
    if (!t.openmp) {
        return {};
    }
    std::string l = t.state.empty() ? "OpenMP thread" : t.state;
    if (!t.region.empty()) {
        l += ", region " + t.region;
    }
    if (t.level || t.team_size) {
        l += fmt::format(" (level {}, team {})", omp_impl::opt_num(t.level), omp_impl::opt_num(t.team_size));
    }
    return l;
}

/// A rank's communicators and their queues (docs/json.md); null when not read.
json queues_json(const process_view& p) {
    if (!p.queues_read) {
        return nullptr;
    }
    json out = json::array();
    for (const auto& c : p.communicators) {
        json jc{{"name", c.name}, {"size", c.size}, {"world_ranks", c.world_ranks}};
        auto queue = [&](const char* key, const debugger::queue_contents& q, bool send) {
            json ops = json::array();
            for (const auto& op : q.operations) {
                ops.push_back({{"peer_world", op.desired_global_rank},
                               {"any_source", !send && op.desired_local_rank < 0},
                               {"tag", op.desired_tag},
                               {"any_tag", op.tag_wild},
                               {"bytes", op.desired_length},
                               {"status", debugger::to_string(op.status)},
                               {"text", queue_operation_text(op, send)}});
            }
            jc[key] = q.available ? ops : json(nullptr);
        };
        queue("sends", c.sends, true);
        queue("receives", c.receives, false);
        queue("unexpected", c.unexpected, false);
        out.push_back(std::move(jc));
    }
    return out;
}

json thread_json(const thread_view& t, const movement& m, int rank) {
    json j{{"tid", t.tid},          {"number", t.number},   {"openmp", t.openmp},   {"frames", t.frames},
           {"where", t.where},      {"moved", m.moved.count({rank, t.tid}) > 0}};
    if (t.openmp) {
        j["state"] = t.state;
        j["region"] = t.region;
        j["thread_num"] = t.thread_num ? json(*t.thread_num) : json(nullptr);
        j["level"] = t.level ? json(*t.level) : json(nullptr);
        j["team_size"] = t.team_size ? json(*t.team_size) : json(nullptr);
    }
    return j;
}

}  // namespace

int triage_main(const std::vector<std::string>& args, bool json_flag, const debugger::plugin_trust_policy& policy) {
    options o;
    o.json = json_flag;
    std::string problem;
    if (int rc = parse_args(args, o, problem); rc != triage_nothing_wrong) {
        if (o.json) {
            std::printf("%s\n", json{{"type", "triage"}, {"error", problem}, {"exit_status", rc}}.dump().c_str());
        } else {
            std::fprintf(stderr, "ompdbg triage: %s\n", problem.c_str());
        }
        return rc;
    }
    // The session's own output (stop reports, warnings) is not part of the report.
    std::FILE* null_out = std::fopen("/dev/null", "w");
    if (null_out == nullptr) {
        std::fprintf(stderr, "ompdbg triage: /dev/null: %s\n", std::strerror(errno));
        return triage_gather_failed;
    }
    struct file_closer {
        std::FILE* f;
        ~file_closer() { std::fclose(f); }
    } closer{null_out};
    report rep;
    {
        session s(false, true, null_out, null_out);
        s.plugin_policy() = policy;
        rep = run(s, o.req);
    }
    const std::vector<snapshot>& snaps = rep.snaps;
    const std::string& gather_error = rep.gather_error;
    if (snaps.empty()) {
        if (o.json) {
            std::printf("%s\n", json{{"type", "triage"},
                                     {"error", gather_error},
                                     {"verdict", {{"kind", "gather-failed"}, {"text", gather_error},
                                                  {"exit_status", triage_gather_failed}}},
                                     {"exit_status", triage_gather_failed}}
                                    .dump(-1, ' ', false, json::error_handler_t::replace)
                                    .c_str());
        } else {
            std::fprintf(stderr, "ompdbg triage: %s\n", gather_error.c_str());
        }
        return triage_gather_failed;
    }
    const snapshot& last = snaps.back();
    const movement& m = rep.moved;
    const std::vector<std::string>& findings = rep.findings;
    const cycle_evidence& cycles = rep.cycles;
    const verdict& v = rep.result;

    // Trees: one per process, and across ranks for a job.
    std::vector<std::pair<const process_view*, stack_tree>> per_process;
    stack_tree merged;
    for (const auto& p : last.procs) {
        stack_tree t;
        for (const auto& th : p.threads) {
            t.add(p.rank, th.tid, th.frames, thread_label(th), th.number);
            merged.add(p.rank, th.tid, th.frames, thread_label(th), th.number);
        }
        per_process.emplace_back(&p, std::move(t));
    }
    bool job = last.kind == "mpi-job";

    std::vector<std::string> text;
    std::string target_line;
    if (last.kind == "core") {
        target_line = fmt::format("Core {} of {} (process {}{})", o.req.core->second, o.req.core->first, last.pid,
                                  !last.procs.empty() && last.procs.front().rank >= 0
                                      ? fmt::format(", MPI rank {}", last.procs.front().rank)
                                      : "");
    } else if (job) {
        target_line = fmt::format("MPI job of {} (pid {}): {} of {}", fs::path(last.starter).filename().string(),
                                  last.pid, count_text(last.procs.size(), "rank"),
                                  last.procs.empty() ? "" : last.procs.front().executable);
    } else {
        target_line = fmt::format("Process {} ({})", last.pid,
                                  last.procs.empty() ? "" : fs::path(last.procs.front().executable).filename().string());
    }
    text.push_back(fmt::format("Triage of {}; {}{}.", target_line, count_text(snaps.size(), "sample"),
                               snaps.size() > 1 ? fmt::format(", {} s apart", o.req.interval) : ""));
    for (const auto& [p, tree] : per_process) {
        std::string head = fmt::format("== {}{} (pid {}{}): {}", p->rank >= 0 ? "Rank " : "Process ",
                                       p->rank >= 0 ? std::to_string(p->rank) : std::to_string(p->pid), p->pid,
                                       p->host.empty() ? "" : ", " + p->host, count_text(p->threads.size(), "thread"));
        if (snaps.size() > 1) {
            std::size_t moved = 0;
            for (const auto& t : p->threads) {
                moved += m.moved.count({p->rank, t.tid});
            }
            head += fmt::format(", {} moved", moved);
        }
        text.push_back(head);
        if (!p->error.empty()) {
            text.push_back("   " + p->error);
            continue;
        }
        if (!p->openmp_runtime.empty()) {
            text.push_back(fmt::format("   OpenMP runtime {}, labels from {}{}", p->openmp_runtime, p->openmp_source,
                                       p->openmp_note.empty() ? "" : " (" + p->openmp_note + ")"));
        }
        for (auto& l : stack_tree_lines(tree, stack_tree_tag::threads)) {
            text.push_back(std::move(l));
        }
        if (!p->mpi_call.empty()) {
            text.push_back("   MPI call: " + p->mpi_call);
        }
    }
    if (job) {
        text.push_back(fmt::format("== Merged stacks of rank {} (every thread):",
                                   format_rank_list({merged.root().ranks.begin(), merged.root().ranks.end()})));
        for (auto& l : stack_tree_lines(merged, stack_tree_tag::ranks_and_threads)) {
            text.push_back(std::move(l));
        }
    }
    if (last.mpi) {
        text.push_back("== Message queues");
        for (const auto& p : last.procs) {
            if (!p.queues_error.empty()) {
                text.push_back(fmt::format("Rank {}: not available ({})", p.rank, p.queues_error));
                continue;
            }
            if (p.queue_lines.empty()) {
                text.push_back(fmt::format("Rank {}: no pending operation", p.rank));
            }
            for (const auto& l : p.queue_lines) {
                text.push_back(fmt::format("Rank {}: {}", p.rank, l));
            }
        }
        text.push_back("== Deadlock");
        // A cycle is a deadlock only with the evidence of every sample (weigh_cycles).
        for (const auto& c : last.deadlock.cycles) {
            text.push_back((cycles.confirmed ? "Deadlock: " : "Wait-for cycle in the last sample: ") + c.describe());
        }
        if (last.deadlock.cycles.empty()) {
            text.push_back("No cycle in the wait-for graph.");
        } else if (!cycles.confirmed) {
            text.push_back("Not a deadlock: " + cycles.text + ".");
        }
        constexpr std::size_t cleared_shown = 8;
        for (std::size_t i = 0; i < last.cleared.size() && i < cleared_shown; ++i) {
            text.push_back("Not a wait: " + last.cleared[i].describe());
        }
        if (last.cleared.size() > cleared_shown) {
            text.push_back(fmt::format("(and {} more operations that are no waits)", last.cleared.size() - cleared_shown));
        }
    }
    if (!findings.empty()) {
        text.push_back("== Findings");
        for (const auto& f : findings) {
            text.push_back(f);
        }
    }
    if (!gather_error.empty()) {
        text.push_back(fmt::format("(sample {} failed: {})", snaps.size() + 1, gather_error));
    }
    text.push_back(fmt::format("Verdict: {}", v.text));

    if (o.dot_file) {
        std::ofstream out(*o.dot_file);
        out << "digraph triage_stacks {\n  node [shape=box];\n";
        auto who = [job](const stack_tree::node& n) {
            return job ? fmt::format("rank {}", format_rank_list({n.ranks.begin(), n.ranks.end()}))
                       : count_text(n.threads.size(), "thread");
        };
        auto edge = [](const stack_tree::node& n) { return std::to_string(n.threads.size()); };
        write_stack_tree_dot(job ? merged : per_process.front().second, out, job ? "job" : "process", who, edge);
        out << "}\n";
        if (last.mpi) {
            out << last.graph.to_dot();
        }
        out.close();
        if (!out) {
            std::fprintf(stderr, "ompdbg triage: %s: cannot write the graph\n", o.dot_file->c_str());
        } else {
            text.push_back(fmt::format("Graphs written to {}.", *o.dot_file));
        }
    }

    if (o.json) {
        json doc{{"type", "triage"}, {"format", 1}, {"target", {{"kind", last.kind}, {"pid", last.pid}}}};
        if (job) {
            doc["target"]["starter"] = last.starter;
        }
        if (o.req.core) {
            doc["target"]["program"] = o.req.core->first;
            doc["target"]["core"] = o.req.core->second;
            doc["target"]["signal"] = last.core_signal ? json(signal_name(last.core_signal)) : json(nullptr);
        }
        doc["samples"] = snaps.size();
        doc["interval"] = o.req.interval;
        json procs = json::array();
        for (const auto& [p, tree] : per_process) {
            json jp{{"rank", p->rank >= 0 ? json(p->rank) : json(nullptr)},
                    {"pid", p->pid},
                    {"host", p->host},
                    {"executable", p->executable},
                    {"error", p->error.empty() ? json(nullptr) : json(p->error)},
                    {"openmp", {{"runtime", p->openmp_runtime.empty() ? json(nullptr) : json(p->openmp_runtime)},
                                {"source", p->openmp_source},
                                {"note", p->openmp_note}}},
                    {"mpi_call", p->mpi_call},
                    {"threads", json::array()},
                    {"tree", stack_tree_json(tree, "process")}};
            for (const auto& t : p->threads) {
                jp["threads"].push_back(thread_json(t, m, p->rank));
            }
            if (last.mpi) {
                jp["queues"] = queues_json(*p);
                jp["queues_error"] = p->queues_error.empty() ? json(nullptr) : json(p->queues_error);
            }
            procs.push_back(std::move(jp));
        }
        doc["processes"] = procs;
        if (job) {
            doc["merged_tree"] = stack_tree_json(merged, "job");
        }
        if (last.mpi) {
            json jcycles = json::array();
            for (const auto& c : last.deadlock.cycles) {
                jcycles.push_back({{"ranks", c.ranks}, {"operations", c.whats}, {"text", c.describe()}});
            }
            json not_waits = json::array();
            for (const auto& c : last.cleared) {
                not_waits.push_back({{"rank", c.rank}, {"peer", c.peer}, {"operation", c.what}, {"why", c.why}});
            }
            doc["deadlock"] = {{"cycles", jcycles},
                               {"confirmed", cycles.confirmed},
                               {"evidence", cycles.text},
                               {"not_waits", not_waits}};
        }
        json moved = json::array();
        for (auto [r, tid] : m.moved) {
            moved.push_back({{"rank", r >= 0 ? json(r) : json(nullptr)}, {"tid", tid}});
        }
        json cpu = json::array();
        for (const auto& [key, seconds] : m.cpu) {
            cpu.push_back({{"rank", key.first >= 0 ? json(key.first) : json(nullptr)},
                           {"tid", key.second},
                           {"seconds", seconds},
                           {"busy", m.busy.count(key) > 0}});
        }
        json messages = nullptr;
        if (m.messages_readable) {
            messages = json::array();
            for (const auto& [rank, n] : m.messages) {
                messages.push_back({{"rank", rank}, {"total", n}, {"last_interval", m.messages_last.at(rank)}});
            }
        }
        doc["movement"] = {{"compared", snaps.size() > 1},
                           {"moved_threads", moved},
                           {"moved_ranks", std::vector<int>(m.moved_ranks.begin(), m.moved_ranks.end())},
                           {"span_seconds", m.span},
                           {"cpu", cpu},
                           {"mpi_messages", messages},
                           {"mpi_messages_note", m.messages_note}};
        doc["findings"] = findings;
        doc["text"] = text;
        doc["verdict"] = {{"kind", v.kind}, {"text", v.text}, {"exit_status", v.exit_status}};
        doc["exit_status"] = v.exit_status;
        if (!gather_error.empty()) {
            doc["sample_error"] = gather_error;
        }
        std::printf("%s\n", doc.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    } else {
        for (const auto& l : text) {
            std::printf("%s\n", l.c_str());
        }
    }
    std::fflush(stdout);
    return v.exit_status;
}

}  // namespace ompdbg::app
