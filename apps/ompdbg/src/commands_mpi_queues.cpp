// `mpi queues` and `mpi deadlock`: what the model's gather_job_queues() found
// (ompdbg/debugger/mpi/message_queues.hpp), as text and JSON.

#include "commands_mpi_queues.hpp"

#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "command_prefix.hpp"
#include "commands_mpi.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/mpi/message_queues.hpp"
#include "session.hpp"

namespace ompdbg::app {

using debugger::gather_job_queues;
using debugger::rank_activity;

namespace {

std::string peer_text(const debugger::queue_operation& op, bool send) {
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
std::string describe_unexpected(const debugger::queue_operation& op) {
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

std::string describe_operation(const debugger::queue_operation& op, bool ours) {
    if (ours && op.queue == debugger::queue_kind::unexpected_messages) {
        return describe_unexpected(op);
    }
    bool send = op.queue == debugger::queue_kind::pending_sends;
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
    text += ", " + debugger::to_string(op.status);
    if (op.status != debugger::queue_status::pending && !send) {
        text += fmt::format(" (from world rank {}, tag {}, {} bytes)", op.actual_global_rank, op.actual_tag,
                            op.actual_length);
    }
    return text;
}

nlohmann::json operation_json(const debugger::queue_operation& op) {
    nlohmann::json j{{"status", debugger::to_string(op.status)},
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

void print_queue(session& s, const char* title, const debugger::queue_contents& q, nlohmann::json& j) {
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

