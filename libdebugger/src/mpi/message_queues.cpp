// The message queues of an MPI job's ranks (message_queues.hpp): the ranks are every
// focused rank of the session's MPI job, or the session's single process (a rank attached
// by pid, its rank read from its environment). Ranks that ended are taken from the
// inferior's end state. The message-queue DLL is called here only: front ends render the
// report.

#include "ompdbg/debugger/mpi/message_queues.hpp"
#include "session/plugin_trust_host.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/mpi/wait_edges.hpp"
#include "ompdbg/debugger/run/signal_names.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::debugger {

namespace {

/// The model's copy of one operation the plugin host reported.
queue_operation model_operation(const plugins::msgq_operation& op) {
    queue_operation out;
    switch (op.queue) {
    case plugins::msgq_queue::pending_sends: out.queue = queue_kind::pending_sends; break;
    case plugins::msgq_queue::pending_receives: out.queue = queue_kind::pending_receives; break;
    case plugins::msgq_queue::unexpected_messages: out.queue = queue_kind::unexpected_messages; break;
    }
    switch (op.status) {
    case plugins::msgq_status::pending: out.status = queue_status::pending; break;
    case plugins::msgq_status::matched: out.status = queue_status::matched; break;
    case plugins::msgq_status::complete: out.status = queue_status::complete; break;
    }
    out.desired_local_rank = op.desired_local_rank;
    out.desired_global_rank = op.desired_global_rank;
    out.tag_wild = op.tag_wild;
    out.desired_tag = op.desired_tag;
    out.desired_length = op.desired_length;
    out.system_buffer = op.system_buffer;
    out.buffer = op.buffer;
    out.actual_local_rank = op.actual_local_rank;
    out.actual_global_rank = op.actual_global_rank;
    out.actual_tag = op.actual_tag;
    out.actual_length = op.actual_length;
    out.extra_text = op.extra_text;
    out.count = op.count;
    out.datatype = op.datatype;
    return out;
}

queue_contents model_queue(const plugins::msgq_queue_contents& q) {
    queue_contents out;
    out.available = q.available;
    out.unavailable_reason = q.unavailable_reason;
    for (const auto& op : q.operations) {
        out.operations.push_back(model_operation(op));
    }
    out.reader = q.reader;
    return out;
}

/// The model's copy of what the plugin host read of one rank's communicators (the front
/// ends see only the model's types, issue 19).
std::vector<queue_communicator> model_communicators(const std::vector<plugins::msgq_communicator>& comms) {
    std::vector<queue_communicator> out;
    for (const auto& c : comms) {
        queue_communicator m;
        m.unique_id = c.unique_id;
        m.name = c.name;
        m.local_rank = c.local_rank;
        m.size = c.size;
        m.world_ranks = c.world_ranks;
        m.sends = model_queue(c.sends);
        m.receives = model_queue(c.receives);
        m.unexpected = model_queue(c.unexpected);
        for (const auto& sq : c.sequences) {
            m.sequences.push_back(queue_peer_sequence{sq.peer_local, sq.peer_global, sq.sent, sq.arrived});
        }
        m.sequences_read = c.sequences_read;
        m.sequences_note = c.sequences_note;
        out.push_back(std::move(m));
    }
    return out;
}

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
    return s.job() != nullptr ? job_ranks(s, wanted) : single_rank(s, wanted);
}

plugins::msgq_process& msgq_of(session& s, const queue_rank& r) {
    msgq_process_state& st = r.owner->model_state.get<msgq_process_state>();
    if (st.target == r.target && st.pid == r.pid && st.process) {
        return *st.process;
    }
    st.process.reset();
    msgq_library_state& lib = s.model_state().get<msgq_library_state>();
    if (!lib.library) {
        lib.library = plugins::msgq_library::load_for(*r.target, plugin_host_policy(s.plugin_policy()));
    }
    st.process = std::make_unique<plugins::msgq_process>(lib.library, *r.target, r.rank);
    st.target = r.target;
    st.pid = r.pid;
    return *st.process;
}

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
                if (op.status != queue_status::pending) {
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
            st.communicators = model_communicators(msgq_of(s, r).communicators());
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

std::string to_string(queue_status st) {
    switch (st) {
    case queue_status::pending: return "pending";
    case queue_status::matched: return "matched";
    case queue_status::complete: return "complete";
    }
    return "unknown";
}

}  // namespace ompdbg::debugger
