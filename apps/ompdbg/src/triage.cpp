// `ompdbg triage`: one look at a stuck OpenMP/MPI job. A gather attaches (the process, or
// the starter's MPIR process table and then every rank), reads every thread's stack, the
// OpenMP view (OMPD), the message queues (the MPI library's DLL) and the wait-for graph,
// and detaches. Several gathers (--samples) tell threads that move from threads that hang,
// as STAT's sampling does. Everything goes through one session that writes to /dev/null:
// its ELF cache gives every rank of one executable the same DWARF index.

#include "triage.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands_core.hpp"
#include "commands_dmpl.hpp"
#include "commands_mpi.hpp"
#include "commands_mpi_queues.hpp"
#include "commands_omp.hpp"
#include "commands_omp_state.hpp"
#include "frame_context.hpp"
#include "session.hpp"
#include "stack.hpp"
#include "stack_tree.hpp"
#include "stop_printer.hpp"
#include "wait_for_graph.hpp"
#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/dwarf/expr.hpp"
#include "ompdbg/plugins/msgq.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/proc_fs.hpp"

namespace ompdbg::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// ---- what one gather sees -------------------------------------------------------------

struct thread_view {
    pid_t tid = 0;
    int number = 0;                      ///< ompdbg's (gdb's) thread number in its process
    std::vector<std::string> frames;     ///< outermost first: the tree's path
    std::vector<std::uint64_t> user_pcs; ///< pcs of the program's own frames (movement)
    std::string where;                   ///< innermost frame of the program's own code
    bool openmp = false;
    std::string state;                   ///< OMPD state name ("ompt_state_wait_barrier_explicit")
    std::optional<std::int64_t> thread_num, level, team_size;
    std::string region;                  ///< "main.omp_outlined at omp_hang_barrier.c:56"
    /// voluntary_ctxt_switches just before the gather attached (a sleeping loop that wakes
    /// up keeps its stack but switches).
    std::optional<long> switches;
    /// CPU time (utime + stime, clock ticks) just before the gather attached: a thread that
    /// busy-waits keeps its stack but burns CPU time.
    std::optional<long> cpu_ticks;
    char run_state = '?';   ///< /proc state letter then: 'R' running or runnable, 'S' asleep...
    /// The label the trees show for this thread ("" for a thread that is not OpenMP's).
    std::string label() const {
        if (!openmp) {
            return {};
        }
        std::string l = state.empty() ? "OpenMP thread" : state;
        if (!region.empty()) {
            l += ", region " + region;
        }
        if (level || team_size) {
            l += fmt::format(" (level {}, team {})", omp_impl::opt_num(level), omp_impl::opt_num(team_size));
        }
        return l;
    }
};

/// What the kernel counts for one thread, read before attaching (the attach itself stops
/// it): voluntary context switches and CPU time.
struct task_counters {
    std::optional<long> switches, cpu_ticks;
    char run_state = '?';
};

struct process_view {
    std::map<pid_t, task_counters> counters;  ///< per thread, read before attaching
    /// How far this rank's messages got: the PML's sequence numbers of every communicator
    /// and peer (they count the messages sent to and matched from that peer).
    /// (communicator, peer) -> (send_sequence, expected_sequence) of Open MPI's ob1 PML;
    /// nullopt when not readable, with the reason in mpi_sequences_note.
    std::optional<std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint16_t>>>
        mpi_sequences;
    std::string mpi_sequences_note;
    int rank = -1;               ///< -1: not an MPI rank
    pid_t pid = 0;
    std::string host, executable;
    std::vector<thread_view> threads;
    std::string openmp_runtime;  ///< path, empty when none
    std::string openmp_source;   ///< "OMPD", or how the labels were found
    std::string openmp_note;     ///< why OMPD could not be used
    std::string mpi_call;        ///< outermost MPI_ function of the main thread
    rank_activity activity = rank_activity::running;
    json queues;                 ///< communicators (docs/json.md); null when not read
    std::string queues_error;
    std::string error;           ///< the process could not be gathered
    std::vector<std::string> queue_lines;
};

struct snapshot {
    std::string kind;            ///< "process", "mpi-job", "core"
    pid_t pid = 0;               ///< the process or the starter
    std::string starter;         ///< the starter's executable
    int core_signal = 0;
    pid_t core_tid = 0;          ///< the core's first thread: the one the signal hit
    std::vector<process_view> procs;
    wait_for_graph graph;
    wait_for_graph::report deadlock;
    bool mpi = false;            ///< message queues and the wait-for graph apply
    std::chrono::steady_clock::time_point when;
};

struct options {
    std::optional<pid_t> pid;
    std::optional<std::pair<std::string, std::string>> core;
    int samples = 2;
    double interval = 0.5;
    std::optional<std::string> dot_file;
    bool json = false;
};

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

/// A signal that ends a process with a core dump on its own (a crash), as opposed to the
/// stop signal a debugger's gcore records (SIGTRAP at a breakpoint, SIGSTOP, SIGINT).
bool crash_signal(int sig) {
    switch (sig) {
    case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGABRT: case SIGQUIT: case SIGSYS:
    case SIGXCPU: case SIGXFSZ:
        return true;
    default:
        return false;
    }
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
        auto& as = omp_impl::require_ompd(s);
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
                        tv.region = omp_impl::describe_code(s, *fn);
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
            omp_impl::state_of(s).aspace.reset();
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
    omp_impl::state_of(s).aspace.reset();
}

std::string describe_op(const plugins::msgq_operation& op, bool send) {
    std::string peer = !send && op.desired_local_rank < 0 ? "from any source"
                                                           : fmt::format("{} rank {}", send ? "to" : "from",
                                                                         op.desired_global_rank);
    return fmt::format("{}, {}, {} bytes, {}", peer, op.tag_wild ? "any tag" : fmt::format("tag {}", op.desired_tag),
                       op.desired_length, plugins::to_string(op.status));
}

/// What gather_job_queues found for one rank, as the report shows it.
void take_queues(process_view& pv, const rank_queue_state& st) {
    pv.mpi_call = st.call;
    pv.activity = st.activity;
    if (!st.queues_read) {
        pv.queues_error = st.ended ? st.end_note : st.queue_error;
        return;
    }
    pv.queues = json::array();
    for (const auto& c : st.communicators) {
        json jc{{"name", c.name}, {"size", c.size}, {"world_ranks", c.world_ranks}};
        auto queue = [&](const char* key, const char* title, const plugins::msgq_queue_contents& q, bool send) {
            json ops = json::array();
            for (const auto& op : q.operations) {
                std::string text = describe_op(op, send);
                ops.push_back({{"peer_world", op.desired_global_rank},
                               {"any_source", !send && op.desired_local_rank < 0},
                               {"tag", op.desired_tag},
                               {"any_tag", op.tag_wild},
                               {"bytes", op.desired_length},
                               {"status", plugins::to_string(op.status)},
                               {"text", text}});
                pv.queue_lines.push_back(fmt::format("{} {}: {}", c.name, title, text));
            }
            jc[key] = q.available ? ops : json(nullptr);
        };
        queue("sends", "pending send", c.sends, true);
        queue("receives", "pending receive", c.receives, false);
        queue("unexpected", "unexpected message", c.unexpected, false);
        pv.queues.push_back(std::move(jc));
    }
}

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

/// Attaches to `pid`: an MPI starter's ranks (the starter is detached as soon as its
/// process table is read), else the process itself.
void attach_target(session& s, pid_t pid, snapshot& snap,
                   std::map<pid_t, std::map<pid_t, task_counters>>& switches) {
    switches[pid] = task_counters_of(pid);
    auto proc = tracer::process::attach(pid, s.elf_provider());
    std::vector<std::unique_ptr<inferior>> list;
    std::optional<tracer::mpir::interface> iface_of_job;
    std::vector<tracer::mpir::proc_desc> job_table;
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
        iface_of_job = iface;
        job_table = table;
        snap.starter = proc->executable().string();
        snap.mpi = true;
        proc->detach();
        for (const auto& d : table) {
            auto inf = std::make_unique<inferior>();
            inf->rank = d.rank;
            inf->host = d.host_name;
            inf->executable = fs::path(d.executable_name).lexically_normal();
            inf->pid = d.pid;
            switches[d.pid] = task_counters_of(d.pid);
            try {
                inf->process = tracer::process::attach(d.pid, s.elf_provider());
            } catch (const std::exception& e) {
                log::write(log::channel::cli, "triage: rank {}: {}", d.rank, e.what());
            }
            list.push_back(std::move(inf));
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
        s.set_job(std::make_unique<mpi_job>(nullptr, *iface_of_job, std::move(job_table), false));
    }
}

/// Detaches every process of the session and keeps their objects in `graveyard` until the
/// triage ends: per-session caches (OMPD, message queues) key their entries by target
/// address, which a later sample's new process objects must never reuse.
void detach_all(session& s, std::vector<std::unique_ptr<inferior>>& graveyard) {
    omp_impl::state_of(s).aspace.reset();
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

snapshot gather(const options& o, session& s, std::vector<std::unique_ptr<inferior>>& graveyard) {
    snapshot snap;
    snap.when = std::chrono::steady_clock::now();
    omp_impl::state_of(s).aspace.reset();
    if (o.core) {
        snap.kind = "core";
        s.set_program(o.core->first, {});
        load_core(s, o.core->second);
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
        } catch (const std::exception& e) {
            for (auto& pv : snap.procs) {
                pv.queues_error = e.what();
            }
        }
    }
    detach_all(s, graveyard);   // every process runs on
    return snap;
}

// ---- trees --------------------------------------------------------------------------

std::string count_text(std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// ---- movement between samples -------------------------------------------------------

struct movement {
    std::set<std::pair<int, pid_t>> moved;   // (rank, tid)
    std::set<int> moved_ranks;
    /// CPU time each thread used between the first and the last sample, in seconds.
    std::map<std::pair<int, pid_t>, double> cpu;
    /// The threads that busy-wait or compute: runnable ('R') at the samples (see busy()).
    std::set<std::pair<int, pid_t>> busy;
    /// Per rank: MPI messages sent or matched between the first and the last sample, and
    /// between the last two (what still moves at the end); absent when not readable.
    std::map<int, std::uint64_t> messages, messages_last;
    bool messages_readable = false;   ///< for every rank of an MPI job
    std::string messages_note;        ///< why not, for one rank
    double span = 0;                  ///< seconds from the first to the last sample
};

/// A thread busy-waits, or computes, when the kernel had it running or runnable ('R') at
/// every sample, or at most of them (at least half) and it used CPU time between the first
/// and the last: a thread asleep in the kernel (a futex, read, poll) is 'S' and uses none.
/// Neither test alone holds on a loaded machine: a spinning thread is now and then caught
/// in a short sleep (a page fault, a write of its log), and a thread that spins with
/// sched_yield among many may get no CPU time at all over a second while staying runnable.
/// Its share of the CPU is no measure for the same reason.
bool busy(const std::vector<snapshot>& snaps, int rank, pid_t tid, double cpu_seconds) {
    std::size_t runnable = 0;
    for (const auto& snap : snaps) {
        bool here = false;
        for (const auto& p : snap.procs) {
            for (const auto& t : p.threads) {
                here = here || (p.rank == rank && t.tid == tid && t.run_state == 'R');
            }
        }
        runnable += here ? 1 : 0;
    }
    return runnable == snaps.size() || (cpu_seconds > 0 && 2 * runnable >= snaps.size());
}

/// Messages between two readings of a rank's sequence numbers (modulo their widths).
std::uint64_t messages_between(const process_view& a, const process_view& b) {
    std::uint64_t n = 0;
    for (const auto& [key, now] : *b.mpi_sequences) {
        auto it = a.mpi_sequences->find(key);
        auto [sent0, matched0] = it == a.mpi_sequences->end() ? std::pair<std::uint32_t, std::uint16_t>{0, 0} : it->second;
        n += static_cast<std::uint32_t>(now.first - sent0) + static_cast<std::uint16_t>(now.second - matched0);
    }
    return n;
}

/// Voluntary context switches one attach/detach cycle causes a sleeping thread (its wait
/// is interrupted into the ptrace stop and restarted after the detach), with a margin.
constexpr long attach_switches = 4;

movement compare(const std::vector<snapshot>& snaps) {
    movement m;
    if (snaps.size() < 2) {
        return m;
    }
    m.span = std::chrono::duration<double>(snaps.back().when - snaps.front().when).count();
    static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::map<std::pair<int, pid_t>, long> first_cpu;
    for (const auto& p : snaps.front().procs) {
        for (const auto& t : p.threads) {
            if (t.cpu_ticks) {
                first_cpu[{p.rank, t.tid}] = *t.cpu_ticks;
            }
        }
    }
    for (const auto& p : snaps.back().procs) {
        for (const auto& t : p.threads) {
            auto it = first_cpu.find({p.rank, t.tid});
            if (t.cpu_ticks && it != first_cpu.end()) {
                double seconds = static_cast<double>(*t.cpu_ticks - it->second) / ticks_per_second;
                m.cpu[{p.rank, t.tid}] = seconds;
                if (busy(snaps, p.rank, t.tid, seconds)) {
                    m.busy.insert({p.rank, t.tid});
                }
            }
        }
    }
    // MPI messages, rank by rank, when every sample of every rank could read them.
    const snapshot& last = snaps.back();
    m.messages_readable = last.mpi && last.procs.size() > 1;
    for (const auto& p : last.procs) {
        std::uint64_t total = 0, at_end = 0;
        for (std::size_t i = 1; i < snaps.size() && m.messages_readable; ++i) {
            const process_view* before = nullptr;
            const process_view* now = nullptr;
            for (const auto& q : snaps[i - 1].procs) {
                before = q.rank == p.rank ? &q : before;
            }
            for (const auto& q : snaps[i].procs) {
                now = q.rank == p.rank ? &q : now;
            }
            for (const process_view* q : {before, now}) {
                if (m.messages_readable && (q == nullptr || !q->mpi_sequences)) {
                    m.messages_readable = false;
                    m.messages_note = q == nullptr ? fmt::format("rank {} missing from a sample", p.rank)
                                                   : fmt::format("rank {}: {}", p.rank, q->mpi_sequences_note);
                }
            }
            if (m.messages_readable) {
                at_end = messages_between(*before, *now);
                total += at_end;
            }
        }
        m.messages[p.rank] = total;
        m.messages_last[p.rank] = at_end;
    }
    if (!m.messages_readable) {
        m.messages.clear();
        m.messages_last.clear();
    }
    for (std::size_t i = 1; i < snaps.size(); ++i) {
        std::map<std::pair<int, pid_t>, const thread_view*> before;
        for (const auto& p : snaps[i - 1].procs) {
            for (const auto& t : p.threads) {
                before[{p.rank, t.tid}] = &t;
            }
        }
        for (const auto& p : snaps[i].procs) {
            for (const auto& t : p.threads) {
                auto it = before.find({p.rank, t.tid});
                // Only threads in the program's own code count (a runtime's or the MPI
                // library's helper threads wake up on their own). Such a thread moved when it
                // is new, when its program frames changed, or when it slept and woke up
                // again more often than triage's own attach and detach make it.
                if (t.user_pcs.empty()) {
                    continue;
                }
                bool switched = it != before.end() && t.switches && it->second->switches &&
                                *t.switches - *it->second->switches > attach_switches;
                if (it == before.end() || it->second->user_pcs != t.user_pcs || switched) {
                    m.moved.insert({p.rank, t.tid});
                    m.moved_ranks.insert(p.rank);
                }
            }
        }
    }
    return m;
}

// ---- findings and verdict -----------------------------------------------------------

std::string process_name(const process_view& p) {
    return p.rank >= 0 ? fmt::format("rank {}", p.rank) : fmt::format("process {}", p.pid);
}

/// "in rank 2, 7 of 8 OpenMP threads wait in a barrier (...) of region X; thread 4 is in read"
std::vector<std::string> openmp_findings(const snapshot& snap) {
    std::vector<std::string> out;
    for (const auto& p : snap.procs) {
        std::map<std::string, std::vector<const thread_view*>> by_region;
        for (const auto& t : p.threads) {
            if (t.openmp && !t.region.empty()) {
                by_region[t.region].push_back(&t);
            }
        }
        for (const auto& [region, threads] : by_region) {
            std::map<std::string, std::vector<const thread_view*>> by_state;
            for (auto* t : threads) {
                by_state[t->state].push_back(t);
            }
            std::size_t team = threads.size();
            if (threads.front()->team_size) {
                team = static_cast<std::size_t>(*threads.front()->team_size);
            }
            for (const auto& [state, ts] : by_state) {
                if (state.find("wait") == std::string::npos) {
                    continue;
                }
                std::string what = state.find("barrier") != std::string::npos ? "wait in a barrier"
                                   : state.find("lock") != std::string::npos   ? "wait for a lock"
                                   : state.find("critical") != std::string::npos ? "wait to enter a critical section"
                                                                                  : "wait";
                std::string text = fmt::format("in {}, {} of {} OpenMP threads {} ({}) of the region {}",
                                               process_name(p), ts.size(), team, what, state, region);
                std::vector<std::string> others;
                for (const auto& [other_state, os] : by_state) {
                    if (other_state == state) {
                        continue;
                    }
                    for (auto* t : os) {
                        std::string who = t->thread_num
                                              ? fmt::format("OpenMP thread {}", *t->thread_num)
                                              : fmt::format("thread {} (LWP {})", t->number, t->tid);
                        others.push_back(fmt::format("{} is {}{}", who,
                                                     other_state.empty() ? "elsewhere" : other_state,
                                                     t->where.empty() ? "" : " in " + t->where));
                    }
                }
                if (!others.empty() && others.size() <= 4) {
                    text += "; ";
                    for (std::size_t i = 0; i < others.size(); ++i) {
                        text += (i ? "; " : "") + others[i];
                    }
                }
                out.push_back(text);
            }
        }
    }
    return out;
}

std::vector<std::string> mpi_findings(const snapshot& snap) {
    std::vector<std::string> out;
    if (!snap.mpi || snap.procs.size() < 2) {
        return out;
    }
    // Ranks inside collectives, by call: all in one (a slow or hung collective), or some
    // ranks in one while others are elsewhere (those never arrived).
    std::map<std::string, std::vector<int>> in_collective;
    for (const auto& p : snap.procs) {
        if (p.activity == rank_activity::blocked_collective) {
            in_collective[p.mpi_call].push_back(p.rank);
        }
    }
    for (const auto& [call, ranks] : in_collective) {
        if (ranks.size() == snap.procs.size()) {
            out.push_back(fmt::format("all {} ranks are in {}", ranks.size(), call));
            continue;
        }
        // The ranks that never arrived, and where each one is instead (its MPI call, or the
        // main thread's innermost frame of the program): the rank to look at.
        std::vector<int> missing;
        std::vector<std::string> where;
        for (const auto& p : snap.procs) {
            if (std::find(ranks.begin(), ranks.end(), p.rank) != ranks.end()) {
                continue;
            }
            missing.push_back(p.rank);
            std::string at;
            for (const auto& th : p.threads) {
                if (th.tid == p.pid) {
                    at = th.where;
                }
            }
            std::string in_call = p.mpi_call.empty() ? "" : "in " + p.mpi_call;
            if (!at.empty()) {
                in_call += (in_call.empty() ? "in " : " from ") + at;
            }
            if (!p.error.empty()) {
                in_call = p.error;
            }
            where.push_back(fmt::format("rank {} {}", p.rank, in_call.empty() ? "is elsewhere" : "is " + in_call));
        }
        std::string text = fmt::format("rank {} wait in {}; rank {} never entered it", format_rank_list(ranks), call,
                                       format_rank_list(missing));
        if (where.size() <= 4) {
            for (std::size_t i = 0; i < where.size(); ++i) {
                text += (i == 0 ? ": " : "; ") + where[i];
            }
        }
        out.push_back(text);
    }
    for (const auto& w : snap.deadlock.waits_on_finished) {
        out.push_back("waiting on a finished rank: " + w.describe(snap.graph));
    }
    for (const auto& st : snap.deadlock.starved) {
        out.push_back(fmt::format("starved: rank {} {}", st.rank, st.why));
    }
    return out;
}

/// The threads that stayed runnable (see busy()) while their stacks stood still
/// (busy-waiting: a spinning barrier, an MPI call polling for progress), grouped by what
/// they wait in: "3 threads of rank 1-3 busy-wait in MPI_Barrier (0.28 s of CPU time each
/// in 0.6 s)"; "" when none.
std::string busy_waiting(const snapshot& last, const movement& m) {
    struct group {
        std::set<int> ranks;
        std::size_t threads = 0;
        double cpu = 0;
    };
    std::map<std::string, group> by_wait;
    for (const auto& p : last.procs) {
        for (const auto& t : p.threads) {
            auto it = m.cpu.find({p.rank, t.tid});
            if (it == m.cpu.end() || !m.busy.count({p.rank, t.tid}) || m.moved.count({p.rank, t.tid})) {
                continue;
            }
            std::string wait = t.tid == p.pid && !p.mpi_call.empty() ? p.mpi_call
                               : t.openmp && !t.state.empty()        ? t.state
                               : !t.where.empty()                    ? t.where
                               : !t.frames.empty()                   ? t.frames.back()
                                                                     : "?";
            group& g = by_wait[wait];
            g.ranks.insert(p.rank);
            ++g.threads;
            g.cpu += it->second;
        }
    }
    std::string out;
    for (const auto& [wait, g] : by_wait) {
        std::string of_ranks = last.mpi && last.procs.size() > 1
                                   ? fmt::format(" of rank {}", format_rank_list({g.ranks.begin(), g.ranks.end()}))
                                   : "";
        out += fmt::format("{}{}{} busy-wait{} in {} ({:.2f} s of CPU time{} in {:.1f} s)", out.empty() ? "" : "; ",
                           count_text(g.threads, "thread"), of_ranks, g.threads == 1 ? "s" : "", wait,
                           g.cpu / static_cast<double>(g.threads), g.threads == 1 ? "" : " each", m.span);
    }
    return out;
}

struct verdict {
    std::string kind;
    std::string text;
    int exit_status = triage_nothing_wrong;
};

verdict decide(const std::vector<snapshot>& snaps, const movement& m, const options& o,
               const std::vector<std::string>& findings) {
    const snapshot& last = snaps.back();
    verdict v;
    std::string detail = findings.empty() ? "" : "; " + findings.front();
    if (!last.deadlock.cycles.empty()) {
        std::set<int> ranks;
        for (const auto& c : last.deadlock.cycles) {
            ranks.insert(c.ranks.begin(), c.ranks.end());
        }
        v = {"deadlock",
             fmt::format("deadlock: rank {} wait on each other: {}", format_rank_list({ranks.begin(), ranks.end()}),
                         last.deadlock.cycles.front().describe()),
             triage_deadlock};
        return v;
    }
    if (last.kind == "core") {
        if (crash_signal(last.core_signal) && !last.procs.empty()) {
            const process_view& p = last.procs.front();
            std::string where;
            for (const auto& t : p.threads) {
                if (t.tid == last.core_tid && !t.where.empty()) {
                    where = fmt::format(" in thread {} at {}", t.number, t.where);
                }
            }
            return {"crashed",
                    fmt::format("crashed: {} was killed by {}{}{}",
                                p.rank >= 0 ? fmt::format("rank {} (process {})", p.rank, p.pid)
                                            : fmt::format("process {}", p.pid),
                                signal_name(last.core_signal), where, detail),
                    triage_crashed};
        }
        std::string stop = last.core_signal != 0
                               ? fmt::format(" (it was stopped by {} when the core was written, no crash)",
                                             signal_name(last.core_signal))
                               : "";
        return {"snapshot", "no deadlock found in the core" + stop + detail, triage_nothing_wrong};
    }
    if (snaps.size() >= 2) {
        double span = m.span;
        std::string spinning = busy_waiting(last, m);
        std::string measured = fmt::format("in {} samples over {:.1f} s", snaps.size(), span);
        if (m.messages_readable) {
            // Messages that still move at the end: the job progresses, however busy its
            // ranks look while they wait.
            std::vector<int> ranks;
            std::uint64_t total = 0;
            for (const auto& [rank, n] : m.messages_last) {
                if (n > 0) {
                    ranks.push_back(rank);
                }
                total += m.messages.at(rank);
            }
            if (!ranks.empty()) {
                return {"progressing",
                        fmt::format("progressing: busy-waiting, making progress: rank {} sent or matched {} MPI "
                                    "messages {} (Open MPI's message sequence numbers){}",
                                    format_rank_list(ranks), total, measured,
                                    spinning.empty() ? "" : "; " + spinning),
                        triage_nothing_wrong};
            }
        }
        std::string no_messages =
            m.messages_readable ? "; no MPI message moved (Open MPI's message sequence numbers unchanged)"
            : last.mpi && last.procs.size() > 1 ? "; MPI messages not counted (" + m.messages_note + ")"
                                                : "";
        if (m.moved.empty()) {
            return {"hang",
                    fmt::format("hang: no thread moved {}: every stack unchanged{}{}{}", measured,
                                spinning.empty() ? "" : "; " + spinning + " without progress", no_messages, detail),
                    triage_hang};
        }
        std::string where = last.mpi && last.procs.size() > 1
                                ? fmt::format(" (rank {})", format_rank_list({m.moved_ranks.begin(), m.moved_ranks.end()}))
                                : "";
        std::size_t total = 0;
        for (const auto& p : last.procs) {
            total += p.threads.size();
        }
        return {"progressing",
                fmt::format("progressing: {} of {} threads moved{} {} (their stacks changed or they woke up){}{}",
                            m.moved.size(), total, where, measured, spinning.empty() ? "" : "; " + spinning,
                            no_messages),
                triage_nothing_wrong};
    }
    (void)o;
    return {"snapshot", "no deadlock found in one snapshot (--samples N tells a hang from progress)" + detail,
            triage_nothing_wrong};
}

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
            o.core = std::make_pair(args[i + 1], args[i + 2]);
            i += 2;
        } else if (a == "--samples") {
            auto v = need(i);
            if (!v) {
                return triage_usage;
            }
            try {
                std::size_t used = 0;
                o.samples = std::stoi(*v, &used);
                if (used != v->size() || o.samples < 1 || o.samples > 1000) {
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
                o.interval = std::stod(*v, &used);
                if (used != v->size() || !(o.interval >= 0) || o.interval > 3600) {
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
        } else if (!a.empty() && a[0] != '-' && !o.pid && !o.core) {
            try {
                std::size_t used = 0;
                long p = std::stol(a, &used, 10);
                if (used != a.size() || p <= 0 || p > 0x3fffffff) {
                    throw std::invalid_argument(a);
                }
                o.pid = static_cast<pid_t>(p);
            } catch (const std::logic_error&) {
                problem = fmt::format("Illegal process-id: {}.", a);
                return triage_usage;
            }
        } else {
            problem = fmt::format("Unknown argument \"{}\".", a);
            return triage_usage;
        }
    }
    if (!o.pid && !o.core) {
        problem = "Argument required: ompdbg triage PID | --core PROG CORE [--samples N] [--interval S] "
                  "[--json] [--dot FILE]";
        return triage_usage;
    }
    if (o.pid && o.core) {
        problem = "Give a PID or --core PROG CORE, not both.";
        return triage_usage;
    }
    if (o.core) {
        o.samples = 1;   // a core does not move
    }
    return triage_nothing_wrong;
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

int triage_main(const std::vector<std::string>& args, bool json_flag, const plugins::plugin_policy& policy) {
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
    std::vector<snapshot> snaps;
    std::string gather_error;
    {
        session s(false, true, null_out, null_out);
        s.plugin_policy() = policy;
        std::vector<std::unique_ptr<inferior>> graveyard;
        for (int i = 0; i < o.samples; ++i) {
            if (i > 0) {
                std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
            }
            try {
                snaps.push_back(gather(o, s, graveyard));
            } catch (const std::exception& e) {
                gather_error = e.what();
                s.end_target();
                break;
            }
        }
    }
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
    movement m = compare(snaps);
    std::vector<std::string> findings = openmp_findings(last);
    for (auto& f : mpi_findings(last)) {
        findings.push_back(std::move(f));
    }
    verdict v = decide(snaps, m, o, findings);

    // Trees: one per process, and across ranks for a job.
    std::vector<std::pair<const process_view*, stack_tree>> per_process;
    stack_tree merged;
    for (const auto& p : last.procs) {
        stack_tree t;
        for (const auto& th : p.threads) {
            t.add(p.rank, th.tid, th.frames, th.label(), th.number);
            merged.add(p.rank, th.tid, th.frames, th.label(), th.number);
        }
        per_process.emplace_back(&p, std::move(t));
    }
    bool job = last.kind == "mpi-job";

    std::vector<std::string> text;
    std::string target_line;
    if (last.kind == "core") {
        target_line = fmt::format("Core {} of {} (process {}{})", o.core->second, o.core->first, last.pid,
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
                               snaps.size() > 1 ? fmt::format(", {} s apart", o.interval) : ""));
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
        for (auto& l : tree.lines(stack_tree::tag::threads)) {
            text.push_back(std::move(l));
        }
        if (!p->mpi_call.empty()) {
            text.push_back("   MPI call: " + p->mpi_call);
        }
    }
    if (job) {
        text.push_back(fmt::format("== Merged stacks of rank {} (every thread):",
                                   format_rank_list({merged.root().ranks.begin(), merged.root().ranks.end()})));
        for (auto& l : merged.lines(stack_tree::tag::ranks_and_threads)) {
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
        for (const auto& c : last.deadlock.cycles) {
            text.push_back("Deadlock: " + c.describe());
        }
        if (last.deadlock.cycles.empty()) {
            text.push_back("No cycle in the wait-for graph.");
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
        (job ? merged : per_process.front().second).write_dot(out, job ? "job" : "process", who, edge);
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
        if (o.core) {
            doc["target"]["program"] = o.core->first;
            doc["target"]["core"] = o.core->second;
            doc["target"]["signal"] = last.core_signal ? json(signal_name(last.core_signal)) : json(nullptr);
        }
        doc["samples"] = snaps.size();
        doc["interval"] = o.interval;
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
                    {"tree", tree.to_json("process")}};
            for (const auto& t : p->threads) {
                jp["threads"].push_back(thread_json(t, m, p->rank));
            }
            if (last.mpi) {
                jp["queues"] = p->queues;
                jp["queues_error"] = p->queues_error.empty() ? json(nullptr) : json(p->queues_error);
            }
            procs.push_back(std::move(jp));
        }
        doc["processes"] = procs;
        if (job) {
            doc["merged_tree"] = merged.to_json("job");
        }
        if (last.mpi) {
            json cycles = json::array();
            for (const auto& c : last.deadlock.cycles) {
                cycles.push_back({{"ranks", c.ranks}, {"operations", c.whats}, {"text", c.describe()}});
            }
            doc["deadlock"] = {{"cycles", cycles}};
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
