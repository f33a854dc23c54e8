// `mpi queues` and `mpi deadlock`, and gather_job_queues() under both: the ranks are every
// focused rank of the session's MPI job, or the session's single process (a rank attached
// by pid, its rank read from its environment). Ranks that ended are taken from the
// inferior's end state.

#include "commands_mpi_queues.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "commands_mpi.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/tracer/unwinder.hpp"
#include "session.hpp"
#include "stop_printer.hpp"
#include "wait_edges.hpp"
#include "ompdbg/debugger/mpi/wait_for_graph.hpp"

namespace ompdbg::app {

namespace {

/// One rank the queue commands look at.
struct queue_rank {
    int rank = 0;
    tracer::target* target = nullptr;  ///< nullptr: the rank has ended
    pid_t pid = 0;
    std::string end_note;              ///< "exited with code 0"
    inferior* owner = nullptr;         ///< the inferior that keeps its msgq_process
};

/// The message-queue DLL of a session (`session::model_state()`), loaded once.
struct msgq_library_state {
    std::shared_ptr<plugins::msgq_library> library;
};

/// The DLL's view of one live rank (`inferior::model_state`), kept across commands (the
/// DLL caches each process's communicator list and refreshes it when it changed).
struct msgq_process_state {
    tracer::target* target = nullptr;
    pid_t pid = 0;
    std::unique_ptr<plugins::msgq_process> process;
};

std::string end_note_of(const inferior& inf) {
    if (!inf.end) {
        return "ended";
    }
    if (inf.end->kind == tracer::stop_kind::exited) {
        return fmt::format("exited with code {}", inf.end->exit_code);
    }
    return fmt::format("killed by signal {}", signal_name(inf.end->signo));
}

/// The ranks of an MPI session: the focus, or `wanted` (each must be a rank of the job).
std::vector<queue_rank> job_ranks(session& s, const std::optional<std::vector<int>>& wanted) {
    std::vector<std::size_t> indexes;
    if (wanted) {
        for (int r : *wanted) {
            bool found = false;
            for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
                if (s.inferiors()[i]->rank == r) {
                    indexes.push_back(i);
                    found = true;
                }
            }
            if (!found) {
                error::send(fmt::format("No rank {} in this MPI job.", r));
            }
        }
    } else {
        indexes = s.focus();
    }
    std::vector<queue_rank> out;
    for (std::size_t i : indexes) {
        if (i >= s.inferiors().size()) {
            continue;
        }
        inferior& inf = *s.inferiors()[i];
        queue_rank r;
        r.owner = &inf;
        r.rank = inf.rank;
        r.pid = inf.pid;
        if (inf.process && inf.process->is_alive()) {
            r.target = inf.process.get();
        } else {
            r.end_note = end_note_of(inf);
        }
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(), [](const queue_rank& a, const queue_rank& b) { return a.rank < b.rank; });
    return out;
}

/// A session attached to one rank by pid: its rank comes from its environment.
std::vector<queue_rank> single_rank(session& s, const std::optional<std::vector<int>>& wanted) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        error::send("The program is not being run.");
    }
    queue_rank r;
    r.owner = &s.current_inferior();
    r.target = tgt;
    r.pid = tgt->pid();
    auto rank = plugins::mpi_rank_from_environment(r.pid);
    if (!rank) {
        error::send(fmt::format("Process {} is not an MPI rank (no OMPI_COMM_WORLD_RANK, PMIX_RANK or "
                                "PMI_RANK in its environment).",
                                r.pid));
    }
    r.rank = *rank;
    if (wanted) {
        for (int w : *wanted) {
            if (w != r.rank) {
                error::send(fmt::format("No rank {} in this session (ranks {}).", w, r.rank));
            }
        }
    }
    return {r};
}

std::vector<queue_rank> queue_ranks(session& s, const std::optional<std::vector<int>>& wanted) {
    return is_mpi_session(s) ? job_ranks(s, wanted) : single_rank(s, wanted);
}

plugins::msgq_process& msgq_of(session& s, const queue_rank& r) {
    msgq_process_state& st = r.owner->model_state.get<msgq_process_state>();
    if (st.target == r.target && st.pid == r.pid && st.process) {
        return *st.process;
    }
    st.process.reset();
    msgq_library_state& lib = s.model_state().get<msgq_library_state>();
    if (!lib.library) {
        lib.library = plugins::msgq_library::load_for(*r.target, s.plugin_policy());
    }
    st.process = std::make_unique<plugins::msgq_process>(lib.library, *r.target, r.rank);
    st.target = r.target;
    st.pid = r.pid;
    return *st.process;
}

std::string peer_text(const plugins::msgq_operation& op, bool send) {
    if (op.desired_local_rank < 0 && !send) {
        return "from any source";
    }
    std::string dir = send ? "to" : "from";
    if (op.desired_global_rank == op.desired_local_rank) {
        return fmt::format("{} rank {}", dir, op.desired_global_rank);
    }
    return fmt::format("{} local rank {} (world rank {})", dir, op.desired_local_rank, op.desired_global_rank);
}

/// An unexpected message: "from rank 1, tag 42, 8 bytes, data at 0x7f.. in the MPI
/// library" (the DLL's own entries, when it has some, keep the general form).
std::string describe_unexpected(const plugins::msgq_operation& op) {
    // User tags are never negative: the MPI library's collectives use those.
    std::string text = fmt::format("{}, tag {}{}, {} bytes", peer_text(op, false), op.desired_tag,
                                   op.desired_tag < 0 ? " (the MPI library's own, for a collective)" : "",
                                   op.desired_length);
    text += op.buffer != 0 ? fmt::format(", data at {:#x} in the MPI library", op.buffer)
                           : std::string(", data still at the sender");
    for (const auto& extra : op.extra_text) {
        text += ", " + extra;
    }
    return text;
}

std::string describe_operation(const plugins::msgq_operation& op, bool ours) {
    if (ours && op.queue == plugins::msgq_queue::unexpected_messages) {
        return describe_unexpected(op);
    }
    bool send = op.queue == plugins::msgq_queue::pending_sends;
    std::string text = peer_text(op, send);
    text += op.tag_wild ? ", any tag" : fmt::format(", tag {}", op.desired_tag);
    if (op.count) {
        text += fmt::format(", count {}", *op.count);
        if (!op.datatype.empty()) {
            text += " " + op.datatype;
        }
    }
    text += fmt::format(", {} bytes, buffer {:#x}", op.desired_length, op.buffer);
    if (op.system_buffer) {
        text += " (system buffer)";
    }
    text += ", " + plugins::to_string(op.status);
    if (op.status != plugins::msgq_status::pending && !send) {
        text += fmt::format(" (from world rank {}, tag {}, {} bytes)", op.actual_global_rank, op.actual_tag,
                            op.actual_length);
    }
    return text;
}

nlohmann::json operation_json(const plugins::msgq_operation& op) {
    nlohmann::json j{{"status", plugins::to_string(op.status)},
                     {"peer_local", op.desired_local_rank},
                     {"peer_world", op.desired_global_rank},
                     {"tag_wild", op.tag_wild},
                     {"tag", op.desired_tag},
                     {"bytes", op.desired_length},
                     {"buffer", fmt::format("{:#x}", op.buffer)},
                     {"system_buffer", op.system_buffer},
                     {"actual_peer_world", op.actual_global_rank},
                     {"actual_tag", op.actual_tag},
                     {"actual_bytes", op.actual_length},
                     {"extra_text", op.extra_text}};
    if (op.count) {
        j["count"] = *op.count;
        j["datatype"] = op.datatype;
    }
    return j;
}

void print_queue(session& s, const char* title, const plugins::msgq_queue_contents& q, nlohmann::json& j) {
    j = nlohmann::json{{"available", q.available}};
    if (!q.available) {
        j["reason"] = q.unavailable_reason;
        s.out().line(fmt::format("    {}: not available ({})", title, q.unavailable_reason));
        return;
    }
    // A queue the DLL could not show and ompdbg read itself says so.
    bool ours = !q.reader.empty();
    if (ours) {
        j["reader"] = q.reader;
    }
    if (q.operations.empty()) {
        s.out().line(fmt::format("    {}: none{}", title, ours ? " (from " + q.reader + ")" : ""));
    } else if (ours) {
        s.out().line(fmt::format("    {} ({}, from {}):", title, q.operations.size(), q.reader));
    } else {
        s.out().line(fmt::format("    {} ({}):", title, q.operations.size()));
    }
    j["operations"] = nlohmann::json::array();
    for (std::size_t i = 0; i < q.operations.size(); ++i) {
        s.out().line(fmt::format("      #{} {}", i, describe_operation(q.operations[i], ours)));
        j["operations"].push_back(operation_json(q.operations[i]));
    }
}

// ---- deadlock ----

const std::set<std::string>& p2p_calls() {
    static const std::set<std::string> calls{
        "MPI_Recv",    "MPI_Send",   "MPI_Ssend",   "MPI_Bsend",   "MPI_Rsend",    "MPI_Sendrecv",
        "MPI_Sendrecv_replace",      "MPI_Wait",    "MPI_Waitall", "MPI_Waitany",  "MPI_Waitsome",
        "MPI_Probe",   "MPI_Mprobe", "MPI_Mrecv"};
    return calls;
}
const std::set<std::string>& collective_calls() {
    static const std::set<std::string> calls{
        "MPI_Barrier",     "MPI_Bcast",          "MPI_Reduce",        "MPI_Allreduce",   "MPI_Gather",
        "MPI_Gatherv",     "MPI_Scatter",        "MPI_Scatterv",      "MPI_Allgather",   "MPI_Allgatherv",
        "MPI_Alltoall",    "MPI_Alltoallv",      "MPI_Alltoallw",     "MPI_Reduce_scatter",
        "MPI_Reduce_scatter_block",              "MPI_Scan",          "MPI_Exscan",      "MPI_Comm_split",
        "MPI_Comm_dup",    "MPI_Comm_create",    "MPI_Comm_split_type", "MPI_Init",      "MPI_Init_thread",
        "MPI_Win_fence",   "MPI_File_open"};
    return calls;
}

/// The outermost MPI function on the main thread's stack ("MPI_Recv"; Open MPI's profiling
/// names PMPI_X count as MPI_X), or empty when the rank is not in MPI.
std::string mpi_call_of(session& s, tracer::target& tgt) {
    std::string call;
    try {
        for (const auto& f : tracer::backtrace(tgt, tgt.pid(), 128)) {
            const auto* m = tgt.module_at(f.lookup_pc());
            if (m == nullptr) {
                continue;
            }
            std::shared_ptr<dwarf::elf_file> elf = m->elf;
            if (!elf) {
                try {
                    elf = s.elf_for(m->path);
                } catch (const std::exception&) {
                    continue;
                }
            }
            if (!elf) {
                continue;
            }
            auto sym = elf->symbol_at(m->to_file(f.lookup_pc()));
            if (!sym) {
                continue;
            }
            std::string name = sym->name;
            if (name.rfind("PMPI_", 0) == 0) {
                name.erase(0, 1);
            }
            if (name.rfind("MPI_", 0) == 0) {
                call = name;  // keep going: the outermost one is what the program called
            }
        }
    } catch (const std::exception&) {
    }
    return call;
}


/// What a starved rank's unexpected queue holds from the ranks it waits for that its
/// receives do not match (a tag mismatch, the usual cause): "; unmatched in its unexpected
/// queue: rank 0's message with tag 7 (8 bytes)", or empty.
std::string unmatched_note(const rank_queue_state& r) {
    std::vector<std::string> notes;
    for (const auto& c : r.communicators) {
        for (const auto& u : c.unexpected.operations) {
            if (u.actual_tag < 0) {
                continue;   // a collective's message, not the program's
            }
            bool awaited_peer = false, matches = false;
            for (const auto& op : c.receives.operations) {
                if (op.status != plugins::msgq_status::pending) {
                    continue;
                }
                bool peer = op.desired_local_rank < 0 || op.desired_global_rank == u.actual_global_rank;
                awaited_peer = awaited_peer || peer;
                matches = matches || (peer && (op.tag_wild || op.desired_tag == u.actual_tag));
            }
            if (awaited_peer && !matches) {
                std::string where = c.name == "MPI_COMM_WORLD" ? "" : fmt::format(" on {}", c.name);
                notes.push_back(fmt::format("rank {}'s message with tag {} ({} bytes){}", u.actual_global_rank,
                                            u.actual_tag, u.actual_length, where));
            }
        }
    }
    if (notes.empty()) {
        return {};
    }
    std::string text = "; unmatched in its unexpected queue: ";
    for (std::size_t i = 0; i < notes.size(); ++i) {
        text += (i == 0 ? "" : ", ") + notes[i];
    }
    return text;
}

}  // namespace

job_queue_report gather_job_queues(session& s, const queue_gather_options& opts) {
    job_queue_report rep;
    for (const auto& r : queue_ranks(s, opts.ranks)) {
        rank_queue_state st;
        st.rank = r.rank;
        st.pid = r.pid;
        if (r.target == nullptr) {
            st.ended = true;
            st.end_note = r.end_note;
            st.activity = rank_activity::finished;
            rep.graph.add_rank(st.rank, st.activity, "", st.end_note);
            rep.ranks.push_back(std::move(st));
            continue;
        }
        st.call = mpi_call_of(s, *r.target);
        if (st.call == "MPI_Finalize") {
            st.activity = rank_activity::finished;
        } else if (p2p_calls().count(st.call)) {
            st.activity = rank_activity::blocked_p2p;
        } else if (collective_calls().count(st.call)) {
            st.activity = rank_activity::blocked_collective;
        }
        // Every live rank's queues: a blocked rank's waits depend on its peers' queues too
        // (wait_edges.hpp); only a blocked rank's failure matters to `mpi deadlock`.
        try {
            st.communicators = msgq_of(s, r).communicators();
            st.queues_read = true;
        } catch (const std::exception& e) {
            if (opts.all_queues || st.activity == rank_activity::blocked_p2p) {
                st.queue_error = e.what();
            }
        }
        rep.graph.add_rank(st.rank, st.activity, st.call,
                           st.activity == rank_activity::finished ? "in MPI_Finalize" : "");
        for (const auto& c : st.communicators) {
            if (c.name == "MPI_COMM_WORLD") {
                rep.world_size = std::max<std::int64_t>(rep.world_size, c.size);
            }
        }
        rep.ranks.push_back(std::move(st));
    }
    rep.cleared = add_wait_edges(rep.graph, rep.ranks);
    rep.verdict = rep.graph.analyze();
    for (auto& st : rep.verdict.starved) {
        for (const auto& r : rep.ranks) {
            if (r.rank == st.rank) {
                st.why += unmatched_note(r);
            }
        }
    }
    return rep;
}

namespace {

/// `mpi queues` / `mpi deadlock` argument: RANKS of an MPI session ("0-3,6", "all"), or the
/// one rank of a session attached by pid.
std::optional<std::vector<int>> parse_queue_ranks(session& s, const std::string& arg) {
    if (arg.empty()) {
        return std::nullopt;
    }
    if (is_mpi_session(s)) {
        return parse_rank_list(s, arg);
    }
    try {
        std::size_t used = 0;
        int only = std::stoi(arg, &used);
        if (used != arg.size() || only < 0) {
            throw std::invalid_argument(arg);
        }
        return std::vector<int>{only};
    } catch (const std::exception&) {
        error::send(fmt::format("Invalid rank \"{}\": mpi queues [RANK]", arg));
    }
}

void cmd_mpi_queues(session& s, std::string_view args) {
    std::string arg(args);
    arg.erase(0, arg.find_first_not_of(" \t"));
    arg.erase(arg.find_last_not_of(" \t") + 1);
    auto rep = gather_job_queues(s, {parse_queue_ranks(s, arg), true});
    nlohmann::json jranks = nlohmann::json::array();
    std::size_t failures = 0;
    std::string first_failure;
    for (const auto& r : rep.ranks) {
        nlohmann::json jr{{"rank", r.rank}, {"pid", r.pid}};
        if (r.ended) {
            s.out().line(fmt::format("Rank {} (pid {}): {}", r.rank, r.pid, r.end_note));
            jr["ended"] = r.end_note;
            jranks.push_back(jr);
            continue;
        }
        if (!r.queues_read) {
            if (rep.ranks.size() == 1) {
                error::send(r.queue_error);
            }
            s.out().error(fmt::format("Rank {}: {}", r.rank, r.queue_error));
            jr["error"] = r.queue_error;
            jranks.push_back(jr);
            if (failures++ == 0) {
                first_failure = r.queue_error;
            }
            continue;
        }
        const auto& comms = r.communicators;
        s.out().line(fmt::format("Rank {} (pid {}): {} communicator{}", r.rank, r.pid, comms.size(),
                                 comms.size() == 1 ? "" : "s"));
        jr["communicators"] = nlohmann::json::array();
        for (const auto& c : comms) {
            // Open MPI reports MPI_UNDEFINED-like values as unsigned 32-bit numbers.
            auto local = static_cast<std::int32_t>(c.local_rank);
            s.out().line(fmt::format("  Communicator \"{}\": size {}, local rank {}, world ranks {}", c.name, c.size,
                                     local < 0 ? "none" : std::to_string(local),
                                     c.world_ranks.empty() ? "none" : format_rank_list(c.world_ranks)));
            nlohmann::json jc{{"name", c.name},       {"id", c.unique_id},
                              {"size", c.size},       {"local_rank", c.local_rank},
                              {"world_ranks", c.world_ranks}};
            print_queue(s, "Pending sends", c.sends, jc["sends"]);
            print_queue(s, "Pending receives", c.receives, jc["receives"]);
            print_queue(s, "Unexpected messages", c.unexpected, jc["unexpected"]);
            jr["communicators"].push_back(std::move(jc));
        }
        jranks.push_back(std::move(jr));
    }
    s.out().field("ranks", jranks);
    std::size_t live = 0;
    for (const auto& r : rep.ranks) {
        live += r.ended ? 0 : 1;
    }
    if (failures > 0 && failures == live) {
        error::send(fmt::format("No rank's message queues could be read ({}).", first_failure));
    }
}

void cmd_mpi_deadlock(session& s, std::string_view args) {
    std::optional<std::string> dot_file;
    {
        std::istringstream in{std::string(args)};
        std::string word;
        while (in >> word) {
            if (word == "--dot") {
                std::string file;
                if (!(in >> file)) {
                    error::send("--dot needs a file name: mpi deadlock [--dot FILE]");
                }
                dot_file = file;
            } else {
                error::send(fmt::format("Unknown argument \"{}\": mpi deadlock [--dot FILE]", word));
            }
        }
    }
    auto rep = gather_job_queues(s, {std::nullopt, false});
    const auto& g = rep.graph;
    for (const auto& r : rep.ranks) {
        if (!r.queue_error.empty()) {
            s.out().error(fmt::format("Rank {}: {}", r.rank, r.queue_error));
        }
    }
    s.out().line(fmt::format("Wait-for graph of {} rank{}: {} blocked in point-to-point calls, {} in collectives, "
                             "{} running, {} finished.",
                             g.rank_count(), g.rank_count() == 1 ? "" : "s", g.count(rank_activity::blocked_p2p),
                             g.count(rank_activity::blocked_collective), g.count(rank_activity::running),
                             g.count(rank_activity::finished)));
    if (rep.world_size > static_cast<std::int64_t>(rep.ranks.size())) {
        std::vector<int> have;
        for (const auto& r : rep.ranks) {
            have.push_back(r.rank);
        }
        s.out().line(fmt::format("Only rank{} {} of {} looked at: waits on the other ranks cannot be followed "
                                 "({}).",
                                 have.size() == 1 ? "" : "s", format_rank_list(have), rep.world_size,
                                 is_mpi_session(s) ? "`rank all` widens the focus"
                                                   : "attach to mpirun to debug every rank"));
    }
    const auto& v = rep.verdict;
    nlohmann::json jcycles = nlohmann::json::array(), jfinished = nlohmann::json::array(),
                   jstarved = nlohmann::json::array();
    for (const auto& c : v.cycles) {
        s.out().line("Deadlock: " + c.describe());
        jcycles.push_back({{"ranks", c.ranks}, {"operations", c.whats}, {"text", c.describe()}});
    }
    if (v.cycles_truncated) {
        s.out().line(fmt::format("(only the first {} cycles are shown)", v.cycles.size()));
    }
    for (const auto& w : v.waits_on_finished) {
        s.out().line("Waiting on a finished rank: " + w.describe(g));
        jfinished.push_back({{"rank", w.rank}, {"peer", w.peer}, {"operation", w.what}});
    }
    for (const auto& st : v.starved) {
        s.out().line(fmt::format("Starved: rank {} {}", st.rank, st.why));
        jstarved.push_back({{"rank", st.rank}, {"why", st.why}});
    }
    if (v.empty()) {
        s.out().line("No deadlock found.");
    }
    nlohmann::json jcleared = nlohmann::json::array();
    for (const auto& c : rep.cleared) {
        s.out().line("Not a wait: " + c.describe());
        jcleared.push_back({{"rank", c.rank}, {"peer", c.peer}, {"operation", c.what}, {"why", c.why}});
    }
    // The ranks as they stand now, once: a cycle in it can be the momentary state of a job
    // that moves on, which only several looks tell (issue 17).
    s.out().line("Evidence: one snapshot of the stopped ranks (a cycle in it may be a momentary wait; "
                 "`ompdbg triage PID --samples N` compares several while the job runs).");
    s.out().field("cycles", jcycles);
    s.out().field("waits_on_finished", jfinished);
    s.out().field("starved", jstarved);
    s.out().field("not_waits", jcleared);
    s.out().field("evidence", "one snapshot");
    if (dot_file) {
        std::ofstream out(*dot_file);
        out << g.to_dot();
        out.close();
        if (!out) {
            error::send(fmt::format("{}: cannot write the graph", *dot_file));
        }
        s.out().line(fmt::format("Wait-for graph written to {}.", *dot_file));
        s.out().field("dot_file", *dot_file);
    }
}

}  // namespace

void register_mpi_queue_commands(command_table& t) {
    command_table& mpi = prefix_table(t, "mpi", "MPI jobs: ranks, stacks, message queues and deadlocks.");
    mpi.add(command{"queues", {}, "Show the message queues of every focused rank (or of RANKS).",
                    "mpi queues [RANKS]\n"
                    "RANKS: N, N-M,K or all (default: the focus; a session attached to one rank by pid\n"
                    "has that rank only).\n"
                    "Per communicator (name, size, local rank, the world ranks it maps): the pending\n"
                    "sends, pending receives and unexpected messages with peer, tag, count, byte length,\n"
                    "buffer address and status, as the MPI library's message-queue DLL reports them.",
                    cmd_mpi_queues, false, nullptr});
    mpi.add(command{"deadlock", {}, "Find deadlocks in the wait-for graph of blocked point-to-point calls.",
                    "mpi deadlock [--dot FILE]\n"
                    "From the message queues and stacks of every focused rank: each cycle of ranks blocked in\n"
                    "point-to-point calls on one another, ranks waiting on ranks that have finished, and\n"
                    "ranks that look starved (waiting on ranks blocked elsewhere), from this one snapshot.\n"
                    "A pending send the peer's posted receive matches (or whose eager data it holds), and a\n"
                    "pending receive whose message is already on its way, are no waits (\"Not a wait:\").\n"
                    "--dot FILE writes the graph for Graphviz.",
                    cmd_mpi_deadlock, false, nullptr});
}

}  // namespace ompdbg::app
