// The gather of `ompdbg triage`: attach (the process, or the starter's MPIR process table
// and then every rank), read every thread's stack, the OpenMP view (OMPD, else ompdbg's DMPL
// library), the message queues (the MPI library's DLL) and the wait-for graph, ob1's message
// sequence numbers, and detach. Everything goes through one session that writes to
// /dev/null: its ELF cache gives every rank of one executable the same DWARF index.

#include "ompdbg/debugger/triage/triage_model.hpp"
#include "omp/ompd_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/eval/frame_context.hpp"
#include "ompdbg/debugger/mpi/message_queues.hpp"
#include "ompdbg/debugger/mpi/mpi_job_base.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/debugger/stack/stack.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/core_file.hpp"
#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/proc_fs.hpp"

namespace ompdbg::debugger::triage {

namespace fs = std::filesystem;

namespace {

// ---- helpers --------------------------------------------------------------------------

/// voluntary_ctxt_switches and CPU time of every thread of `pid` (read before attaching).
std::map<pid_t, task_counters> task_counters_of(pid_t pid) {
    std::map<pid_t, task_counters> out;
    for (pid_t tid : tracer::proc_fs::list_tasks(pid)) {
        task_counters& c = out[tid];
        if (auto v = tracer::proc_fs::status_field(pid, tid, "voluntary_ctxt_switches")) {
            c.switches = std::atol(v->c_str());
        }
        auto stat = tracer::proc_fs::read_thread_stat(pid, tid);
        c.cpu_ticks = stat.cpu_ticks;
        c.run_state = stat.state;
    }
    return out;
}

/// The environment of a process from its own memory (libc's `__environ`), for a core; empty
/// when libc or the array cannot be read.
std::vector<std::string> environment_in_memory(tracer::target& tgt) {
    std::vector<std::string> out;
    for (const auto& m : tgt.modules()) {
        if (!m.elf) {
            continue;
        }
        for (const char* name : {"__environ", "environ"}) {
            auto syms = m.elf->find_symbols(name);
            if (syms.empty()) {
                continue;
            }
            std::uint64_t array = 0;
            if (tgt.try_read_memory(m.to_runtime(syms.front().value),
                                    std::as_writable_bytes(std::span(&array, 1))) != sizeof array) {
                return out;
            }
            for (int i = 0; i < 4096 && array != 0; ++i) {
                std::uint64_t entry = 0;
                if (tgt.try_read_memory(virt_addr(array + 8 * static_cast<std::uint64_t>(i)),
                                        std::as_writable_bytes(std::span(&entry, 1))) != sizeof entry ||
                    entry == 0) {
                    break;
                }
                char buf[512];
                std::size_t n = tgt.try_read_memory(virt_addr(entry), std::as_writable_bytes(std::span(buf)));
                out.emplace_back(buf, static_cast<std::size_t>(std::find(buf, buf + n, '\0') - buf));
            }
            return out;
        }
    }
    return out;
}


std::string frame_node_name(const stack_frame& f) {
    std::string name = frame_function_name(f);
    // The program's own frames carry their line: threads of one function that stop at
    // different lines (a barrier, a read) are different branches.
    if (f.module != nullptr && f.module->is_executable && f.line) {
        name += fmt::format(" at {}:{}", fs::path(f.line->file).filename().string(), f.line->line);
    }
    return name;
}

/// The OpenMP labels from ompdbg's DMPL library (region, encountering thread, what each
/// thread waits in); false when no DMPL library answers.
bool label_from_dmpl(session& s, process_view& pv) {
    std::vector<dmpl_thread_position> positions;
    try {
        positions = dmpl_thread_positions(s);
    } catch (const std::exception& e) {
        log::write(log::channel::cli, "triage: DMPL: {}", e.what());
        return false;
    }
    pv.openmp_source = "ompdbg's DMPL library (no OMPD)";
    for (auto& tv : pv.threads) {
        for (const auto& p : positions) {
            if (p.tid != tv.tid || (p.region.empty() && p.state != "idle in the runtime")) {
                continue;
            }
            tv.openmp = true;
            tv.state = p.state;
            tv.region = p.region;
            if (p.encountering) {
                tv.thread_num = 0;
            }
            if (p.thread_num) {
                tv.thread_num = p.thread_num;
                tv.team_size = p.team_size;
                tv.level = p.level;
            }
        }
    }
    return true;
}

/// The OpenMP labels of every thread of the current inferior, through OMPD.
void label_openmp_threads(session& s, process_view& pv) {
    tracer::target* tgt = s.target();
    auto probe = plugins::probe_openmp_runtime(*tgt);
    if (probe.what == plugins::omp_runtime_probe::kind::none) {
        return;
    }
    pv.openmp_runtime = probe.runtime_path.string();
    try {
        auto& as = ompd::require_ompd(s);
        pv.openmp_source = "OMPD";
        auto thread_num_icv = as.find_icv("thread-num-var");
        auto levels_icv = as.find_icv("levels-var");
        auto team_icv = as.find_icv("team-size-var");
        for (auto& tv : pv.threads) {
            auto t = as.thread_of(tv.tid);
            if (!t) {
                continue;
            }
            tv.openmp = true;
            tv.state = as.state_name(as.state(*t).first);
            if (thread_num_icv) {
                tv.thread_num = as.icv(*t, *thread_num_icv).number;
            }
            if (auto par = as.current_parallel(*t)) {
                if (levels_icv) {
                    tv.level = as.icv(*par, *levels_icv).number;
                }
                if (team_icv) {
                    tv.team_size = as.icv(*par, *team_icv).number;
                }
            }
            if (tv.level.value_or(0) > 0) {
                if (auto tk = as.current_task(*t)) {
                    if (auto fn = as.task_function(*tk)) {
                        tv.region = ompd::describe_code(s, *fn);
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        // No OMPD (libgomp, a stripped runtime, OMP_DEBUG unset): ompdbg's DMPL library
        // tells the region each thread runs and where it waits; without it, the outlined
        // function on the stack still names the region.
        pv.openmp_note = e.what();
        if (label_from_dmpl(s, pv)) {
            ompd::forget_address_spaces(s);
            return;
        }
        pv.openmp_source = "the stack (no OMPD)";
        for (auto& tv : pv.threads) {
            for (auto it = tv.frames.rbegin(); it != tv.frames.rend(); ++it) {
                if (it->find(".omp_outlined") != std::string::npos || it->find("._omp_fn.") != std::string::npos) {
                    tv.openmp = true;
                    tv.region = *it;
                    break;
                }
            }
        }
    }
    ompd::forget_address_spaces(s);
}

/// What gather_job_queues found for one rank, as the report shows it.
void take_queues(process_view& pv, const rank_queue_state& st) {
    pv.mpi_call = st.call;
    pv.activity = st.activity;
    if (!st.queues_read) {
        pv.queues_error = st.ended ? st.end_note : st.queue_error;
        return;
    }
    pv.queues_read = true;
    pv.communicators = st.communicators;
    for (const auto& c : pv.communicators) {
        auto queue = [&](const char* title, const queue_contents& q, bool send) {
            for (const auto& op : q.operations) {
                pv.queue_lines.push_back(fmt::format("{} {}: {}", c.name, title, queue_operation_text(op, send)));
            }
        };
        queue("pending send", c.sends, true);
        queue("pending receive", c.receives, false);
        queue("unexpected message", c.unexpected, false);
    }
}

}  // namespace

std::string queue_operation_text(const queue_operation& op, bool send) {
    std::string peer = !send && op.desired_local_rank < 0 ? "from any source"
                                                           : fmt::format("{} rank {}", send ? "to" : "from",
                                                                         op.desired_global_rank);
    return fmt::format("{}, {}, {} bytes, {}", peer, op.tag_wild ? "any tag" : fmt::format("tag {}", op.desired_tag),
                       op.desired_length, to_string(op.status));
}

namespace {

/// Every thread of the current inferior: stack, program frames, OpenMP labels.
void gather_current(session& s, process_view& pv) {
    tracer::target* tgt = s.target();
    if (tgt == nullptr) {
        pv.error = "the process is gone";
        return;
    }
    s.refresh_thread_numbers();
    for (tracer::thread* t : tgt->threads()) {
        thread_view tv;
        tv.tid = t->tid();
        tv.number = s.thread_number(tv.tid);
        if (auto it = pv.counters.find(tv.tid); it != pv.counters.end()) {
            tv.switches = it->second.switches;
            tv.cpu_ticks = it->second.cpu_ticks;
            tv.run_state = it->second.run_state;
        }
        try {
            const auto& frames = s.stack(tv.tid);
            for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
                tv.frames.push_back(frame_node_name(*it));
                if (it->module != nullptr && it->module->is_executable) {
                    tv.user_pcs.push_back(it->pc());
                }
            }
            tv.in_program = !frames.empty() && frames.front().module != nullptr && frames.front().module->is_executable;
            for (const auto& f : frames) {
                if (f.module != nullptr && f.module->is_executable) {
                    tv.where = frame_node_name(f);
                    break;
                }
            }
        } catch (const std::exception& e) {
            tv.frames.push_back(fmt::format("<stack unreadable: {}>", e.what()));
        }
        pv.threads.push_back(std::move(tv));
    }
    std::sort(pv.threads.begin(), pv.threads.end(),
              [](const thread_view& a, const thread_view& b) { return a.number < b.number; });
    label_openmp_threads(s, pv);
}

/// The message sequence numbers of the current rank: Open MPI's ob1 PML numbers every
/// message per communicator and peer (mca_pml_ob1_comm_proc_t's send_sequence, and
/// expected_sequence for the messages matched from that peer), the internal messages of
/// collectives included. They move while messages move, even when every rank busy-waits
/// in one call, and stand still in a hung collective. Read through Open MPI's DWARF
/// (libmpi's ompi_mpi_communicators, mca_pml_ob1's types); without it, or with another
/// PML, mpi_sequences stays empty and the note says why.
void read_mpi_sequences(session& s, process_view& pv) {
    try {
        const auto& frames = s.stack(pv.pid);
        if (frames.empty()) {
            error::send("the main thread has no frame");
        }
        frame_context ctx(s, pv.pid, frames.front());
        auto num = [&](const std::string& expr) {
            return static_cast<std::uint64_t>(dwarf::as_integer(dwarf::evaluate(expr, ctx)));
        };
        std::string pml;
        for (int i = 0; i < 8; ++i) {
            auto c = num(fmt::format("mca_pml_base_selected_component.pmlm_version.mca_component_name[{}]", i));
            if (c == 0) {
                break;
            }
            pml.push_back(static_cast<char>(c));
        }
        if (pml != "ob1") {
            error::send(fmt::format("the PML is \"{}\", not ob1", pml));
        }
        // The layout from the DWARF once (the program's mpi.h declares ompi_communicator_t
        // without its members, so the offset comes through libmpi's own object), then
        // plain reads.
        std::uint64_t pml_comm_at =
            num("(unsigned long)&ompi_mpi_comm_world.comm.c_pml_comm - (unsigned long)&ompi_mpi_comm_world.comm");
        std::uint64_t procs_at = num("(unsigned long)&((mca_pml_ob1_comm_t*)0)->procs");
        std::uint64_t num_procs_at = num("(unsigned long)&((mca_pml_ob1_comm_t*)0)->num_procs");
        std::uint64_t sent_at = num("(unsigned long)&((mca_pml_ob1_comm_proc_t*)0)->send_sequence");
        std::uint64_t matched_at = num("(unsigned long)&((mca_pml_ob1_comm_proc_t*)0)->expected_sequence");
        if (num("sizeof(((mca_pml_ob1_comm_proc_t*)0)->send_sequence)") != 4 ||
            num("sizeof(((mca_pml_ob1_comm_proc_t*)0)->expected_sequence)") != 2) {
            error::send("mca_pml_ob1_comm_proc_t's sequence numbers are not of the sizes ompdbg reads");
        }
        std::uint64_t comms = std::min<std::uint64_t>(num("ompi_mpi_communicators.size"), 1024);
        std::uint64_t table = num("(unsigned long)ompi_mpi_communicators.addr");
        tracer::target& tgt = *s.target();
        auto read = [&](std::uint64_t addr, auto zero) -> decltype(zero) {
            decltype(zero) v{};
            if (tgt.try_read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1))) != sizeof v) {
                error::send(fmt::format("Cannot access memory at address {:#x}", addr));
            }
            return v;
        };
        std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint16_t>> seq;
        for (std::uint64_t i = 0; i < comms && table != 0; ++i) {
            auto comm = read(table + 8 * i, std::uint64_t{});
            auto pml_comm = comm == 0 ? 0 : read(comm + pml_comm_at, std::uint64_t{});
            if (pml_comm == 0) {
                continue;
            }
            auto peers = std::min<std::uint64_t>(read(pml_comm + num_procs_at, std::uint64_t{}), 4096);
            auto procs = read(pml_comm + procs_at, std::uint64_t{});
            for (std::uint64_t j = 0; j < peers && procs != 0; ++j) {
                auto proc = read(procs + 8 * j, std::uint64_t{});
                if (proc == 0) {
                    continue;   // no message with that peer yet (made on first use)
                }
                seq[{comm, j}] = {read(proc + sent_at, std::uint32_t{}), read(proc + matched_at, std::uint16_t{})};
            }
        }
        pv.mpi_sequences = std::move(seq);
    } catch (const std::exception& e) {
        pv.mpi_sequences_note = e.what();
        log::write(log::channel::cli, "triage: MPI sequence numbers of {}: {}", pv.pid, e.what());
    }
}

/// The MPI job of a triage sample: its ranks, attached, without the starter (detached at
/// once); the session detaches them at its end.
class attached_ranks final : public mpi_job_base {
public:
    bool launched() const override { return false; }
};

/// Attaches to `pid`: an MPI starter's ranks (the starter is detached as soon as its
/// process table is read), else the process itself.
void attach_target(session& s, pid_t pid, snapshot& snap,
                   std::map<pid_t, std::map<pid_t, task_counters>>& switches) {
    switches[pid] = task_counters_of(pid);
    auto proc = tracer::process::attach(pid, s.elf_provider());
    std::vector<std::unique_ptr<inferior>> list;
    if (auto iface = tracer::mpir::interface::find(*proc)) {
        std::vector<tracer::mpir::proc_desc> table;
        try {
            table = iface->proctable(*proc);
        } catch (const std::exception& e) {
            proc->detach();
            error::send(fmt::format("Process {} ({}) is an MPI starter without a job to triage: {}", pid,
                                    proc->executable().filename().string(), e.what()));
        }
        snap.kind = "mpi-job";
        snap.starter = proc->executable().string();
        snap.mpi = true;
        proc->detach();
        for (const auto& d : table) {
            if (is_local_host(d.host_name, s.settings().local_hosts)) {
                switches[d.pid] = task_counters_of(d.pid);   // a remote pid means nothing in our /proc
            }
        }
        // A rank that cannot be attached is listed without a process, the others gathered.
        std::vector<std::string> errors;
        list = attach_job_ranks(s, table, errors);
        for (auto& e : errors) {
            log::write(log::channel::cli, "triage: {}", e);
        }
    } else {
        snap.kind = "process";
        auto inf = std::make_unique<inferior>();
        inf->executable = proc->executable();
        if (auto rank = plugins::mpi_rank_from_environment(pid)) {
            inf->rank = *rank;   // one rank attached by itself: its queues still tell something
            snap.mpi = true;
        }
        inf->process = std::move(proc);
        list.push_back(std::move(inf));
    }
    s.set_inferiors(std::move(list));
    if (snap.kind == "mpi-job") {
        // The job without its starter (detached above): the ranks are the session's MPI
        // job, so gather_job_queues() walks all of them.
        s.set_job(std::make_unique<attached_ranks>());
    }
}

/// Detaches every process of the session and keeps their objects in `graveyard` until the
/// triage ends: per-session caches (OMPD, message queues) key their entries by target
/// address, which a later sample's new process objects must never reuse.
void detach_all(session& s, std::vector<std::unique_ptr<inferior>>& graveyard) {
    ompd::forget_address_spaces(s);
    for (auto& inf : s.inferiors()) {
        if (inf->process && inf->process->is_alive()) {
            try {
                inf->process->detach();
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "triage: detaching {}: {}", inf->pid, e.what());
            }
        }
        graveyard.push_back(std::move(inf));
    }
    s.inferiors().clear();
    s.end_target();
}

}  // namespace

snapshot gather(const request& o, session& s, std::vector<std::unique_ptr<inferior>>& graveyard) {
    snapshot snap;
    snap.when = std::chrono::steady_clock::now();
    ompd::forget_address_spaces(s);
    if (o.core) {
        snap.kind = "core";
        s.set_program(o.core->first, {});
        // The core as `core-file` opens it; its warnings (truncated, of another program)
        // go to the observer.
        auto core = tracer::core_file::open(o.core->second, *s.program(), s.elf_provider());
        for (const auto& w : core->warnings()) {
            s.observer().warning(w);
        }
        s.set_core(std::move(core));
        snap.core_signal = s.core()->signal();
        snap.pid = s.core()->pid();
        snap.core_tid = s.selected_tid();
        process_view pv;
        pv.pid = snap.pid;
        pv.executable = o.core->first;
        // A core of one MPI rank: its rank from the environment in its memory.
        if (auto rank = plugins::mpi_rank_from_environment(environment_in_memory(*s.target()))) {
            pv.rank = *rank;
        }
        gather_current(s, pv);
        snap.procs.push_back(std::move(pv));
        return snap;
    }
    snap.pid = *o.pid;
    std::map<pid_t, std::map<pid_t, task_counters>> switches;
    attach_target(s, *o.pid, snap, switches);
    for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
        s.switch_to(i);
        auto& inf = *s.inferiors()[i];
        process_view pv;
        pv.rank = inf.rank;
        pv.pid = inf.pid;
        pv.host = inf.host;
        pv.executable = inf.executable.string();
        if (!inf.process || !inf.process->is_alive()) {
            pv.error = "could not attach";
        } else {
            pv.counters = switches[pv.pid];
            gather_current(s, pv);
            if (snap.mpi) {
                read_mpi_sequences(s, pv);
            }
        }
        snap.procs.push_back(std::move(pv));
    }
    s.switch_to(0);
    if (snap.mpi) {
        try {
            job_queue_report rep = gather_job_queues(s);
            for (const auto& st : rep.ranks) {
                for (auto& pv : snap.procs) {
                    if (pv.rank == st.rank) {
                        take_queues(pv, st);
                    }
                }
            }
            snap.graph = std::move(rep.graph);
            snap.deadlock = std::move(rep.verdict);
            snap.cleared = std::move(rep.cleared);
        } catch (const std::exception& e) {
            for (auto& pv : snap.procs) {
                pv.queues_error = e.what();
            }
        }
    }
    detach_all(s, graveyard);   // every process runs on
    return snap;
}

}  // namespace ompdbg::debugger::triage
