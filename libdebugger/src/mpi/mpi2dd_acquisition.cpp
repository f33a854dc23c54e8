// MPI jobs through the MPI-2 debugger interface (MPI2DD): acquiring the job of a starter
// launched or attached, following its directory processes, and its table events while it
// runs (new processes become ranks).

#include "ompdbg/debugger/mpi/mpi2dd_acquisition.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/mpi/job_events.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/mpir.hpp"

namespace ompdbg::debugger {

namespace mdd = tracer::mpi2dd;

namespace {

constexpr std::uint32_t debugger_flags = MPI2DD_FLAG_BEING_DEBUGGED | MPI2DD_FLAG_REQUEST_DIRECTORY_EVENTS;

std::string starter_name(mpi_job& job) {
    return job.starter() ? job.starter()->executable().filename().string() : std::string("the starter");
}

pid_t parent_of(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream rest(text.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    return ppid;
}

/// Why a process the tables name must not be attached, or nullopt when it may: it must
/// exist and descend from the starter or run the executable its entry names.
std::optional<std::string> refusal(pid_t pid, const std::string& executable, pid_t starter, const std::string& host) {
    if (pid <= 0) {
        return fmt::format("{} is not a process id", pid);
    }
    std::error_code ec;
    if (!std::filesystem::exists(fmt::format("/proc/{}", pid), ec)) {
        return no_such_process(pid, host);
    }
    for (pid_t p = pid, depth = 0; p > 1 && depth < 256; ++depth) {
        p = parent_of(p);
        if (p == starter) {
            return std::nullopt;
        }
    }
    auto exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
    if (!ec && !executable.empty()) {
        std::error_code ec2;
        auto named = std::filesystem::canonical(executable, ec2);
        if (!ec2 && std::filesystem::equivalent(exe, named, ec2)) {
            return std::nullopt;
        }
    }
    return fmt::format("process {} ({}) does not descend from the starter (pid {}) and does not run {}", pid,
                       ec ? std::string("?") : exe.string(), starter, executable.empty() ? "(no name)" : executable);
}

/// Whether `p` still runs (not ended, nor a zombie whose exit we have not waited yet).
bool is_live(tracer::process& p) {
    if (!p.is_alive()) {
        return false;
    }
    std::ifstream in(fmt::format("/proc/{}/stat", p.pid()));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

/// Whether anything of `p`'s address space can still be read: not in a process that is
/// exiting (its memory is gone before /proc shows it as a zombie).
bool has_memory(tracer::process& p, const mdd::interface& iface) {
    std::byte b{};
    return iface.breakpoint_address() && p.try_read_memory(*iface.breakpoint_address(), std::span(&b, 1)) == 1;
}

/// Reads the tables of directory `index` of `job` and, recursively, of every directory and
/// metadirectory they list (attached on first sight, kept traced with their breakpoint).
/// Appends the processes of every proctable to `out`. Throws for a malformed structure, a
/// table that lists its own process, or tables that list each other.
void walk(session& s, mpi_job& job, std::size_t index, std::vector<pid_t>& path, std::set<pid_t>& seen,
          std::vector<mpi2dd_job::rank_desc>& out) {
    auto& dd = *job.mpi2dd;
    tracer::process* p = dd.directories()[index].proc ? dd.directories()[index].proc.get() : job.starter();
    if (!p) {
        return;
    }
    pid_t self = dd.directories()[index].pid;
    mdd::info info;
    try {
        info = dd.directories()[index].iface.read(*p);
    } catch (const error&) {
        if (index > 0 && (!is_live(*p) || !has_memory(*p, dd.directories()[index].iface))) {
            log::write(log::channel::cli, "MPI2DD: directory process {} ended", self);
            return;   // a directory that ended is still listed until its parent reaps it
        }
        throw;
    }
    path.push_back(self);
    seen.insert(self);
    for (auto& d : info.proctable) {
        out.push_back({d, self});
    }
    std::vector<std::pair<std::string, mdd::directory_entry>> listed;
    for (auto& d : info.directories) {
        listed.emplace_back("directory_table", d);
    }
    for (auto& d : info.metadirectories) {
        listed.emplace_back("metadirectory_table", d);
    }
    dd.directories()[index].last = std::move(info);
    pid_t starter = job.starter() ? job.starter()->pid() : dd.directories().front().pid;
    for (auto& [table, entry] : listed) {
        if (entry.pid == self) {
            error::send(fmt::format("MPI2DD {} of process {} lists the process itself.", table, self));
        }
        if (std::find(path.begin(), path.end(), entry.pid) != path.end()) {
            std::string chain;
            for (pid_t q : path) {
                chain += fmt::format("{} -> ", q);
            }
            error::send(fmt::format("MPI2DD directory tables list each other: {}{}.", chain, entry.pid));
        }
        if (seen.count(entry.pid)) {
            continue;
        }
        std::size_t next = dd.directories().size();
        for (std::size_t i = 0; i < dd.directories().size(); ++i) {
            if (dd.directories()[i].pid == entry.pid) {
                next = i;
            }
        }
        if (next == dd.directories().size()) {
            if (auto why = refusal(entry.pid, entry.executable_name, starter, entry.host_name)) {
                s.observer().job_warning(
                    fmt::format("MPI2DD: not attaching to directory process {}: {}.", entry.pid, *why));
                continue;
            }
            mpi2dd_job::directory d;
            d.pid = entry.pid;
            d.proc = tracer::process::attach(entry.pid, s.elf_provider());
            auto iface = mdd::interface::find(*d.proc);
            if (!iface) {
                error::send(fmt::format("MPI2DD directory process {} ({}) has no MPI2DD_info.", entry.pid,
                                        d.proc->executable().string()));
            }
            d.iface = *iface;
            d.iface.read_header(*d.proc);
            d.iface.set_debugger_flags(*d.proc, debugger_flags);
            if (d.iface.breakpoint_address()) {
                d.proc->add_breakpoint_site(*d.iface.breakpoint_address(), true);
            }
            log::write(log::channel::cli, "MPI2DD: attached directory process {}", entry.pid);
            dd.attached_since_event.push_back(d.proc.get());
            dd.directories().push_back(std::move(d));
        }
        walk(s, job, next, path, seen, out);
    }
    path.pop_back();
}

/// Every process of the job's tables that is not a rank of the session yet.
std::vector<mpi2dd_job::rank_desc> new_processes(session& s, mpi_job& job) {
    std::vector<mpi2dd_job::rank_desc> all;
    std::vector<pid_t> path;
    std::set<pid_t> seen;
    walk(s, job, 0, path, seen, all);
    std::vector<mpi2dd_job::rank_desc> out;
    std::set<mpi2dd_job::rank_key> taken;
    for (auto& r : all) {
        mpi2dd_job::rank_key key{r.desc.host_name, r.desc.pid};
        if (job.mpi2dd->ranks().count(key) || !taken.insert(key).second) {
            continue;   // known, or listed by two directories
        }
        out.push_back(std::move(r));
    }
    // Comm worlds in the order they first appear, each by rank: the starter's world gets
    // session ranks equal to its MPI ranks.
    std::vector<std::string> worlds;
    for (auto& r : out) {
        if (std::find(worlds.begin(), worlds.end(), r.desc.comm_world_id) == worlds.end()) {
            worlds.push_back(r.desc.comm_world_id);
        }
    }
    auto order = [&](const mpi2dd_job::rank_desc& r) {
        return std::pair(std::find(worlds.begin(), worlds.end(), r.desc.comm_world_id) - worlds.begin(), r.desc.rank);
    };
    std::stable_sort(out.begin(), out.end(), [&](auto& a, auto& b) { return order(a) < order(b); });
    return out;
}

/// Opens `inf`'s gate (MPI2DD_FLAG_GATE in its own MPI2DD_info): the rank leaves its
/// start-up as soon as it runs again.
void open_gate(session& s, inferior& inf, const std::string& who) {
    try {
        auto iface = mdd::interface::find(*inf.process);
        if (!iface) {
            s.observer().job_warning(fmt::format("MPI2DD: {} has no MPI2DD_info: its gate cannot be opened.", who));
            return;
        }
        iface->read_header(*inf.process);
        iface->set_debugger_flags(*inf.process, MPI2DD_FLAG_GATE | MPI2DD_FLAG_BEING_DEBUGGED);
    } catch (const std::exception& e) {
        s.observer().job_warning(fmt::format("MPI2DD: {}: {}", who, e.what()));
    }
}

/// Why a process of another host must not be debugged as the rank its entry describes, or
/// nullopt: its pid there is never looked up here, so the agent's word on the program it
/// runs is the check (the starter's descendants cannot be told from here).
std::optional<std::string> remote_refusal(tracer::process& p, const mdd::proc_desc& d) {
    auto exe = p.executable().lexically_normal();
    if (exe.empty() || d.executable_name.empty() || exe == std::filesystem::path(d.executable_name).lexically_normal()) {
        return std::nullopt;
    }
    return fmt::format("process {} on host {} runs {}, not {}", d.pid, d.host_name, exe.string(), d.executable_name);
}

/// Attaches the processes of `descs` (after the safety check), opens their gates, records
/// them in the job; returns one inferior per process attached, numbered from `first_rank`,
/// except that with `world_ranks` the processes of the first comm world keep their MPI rank
/// (a rank missing from the job leaves a gap rather than renumbering the others). Processes
/// of other hosts are reached as an MPIR job's (remote_ranks.hpp): one agent per host; one
/// that cannot be reached stays listed as `lost`.
std::vector<std::unique_ptr<inferior>> attach_processes(session& s, mpi_job& job,
                                                        const std::vector<mpi2dd_job::rank_desc>& descs,
                                                        int first_rank, bool world_ranks = false) {
    std::string first_world = descs.empty() ? std::string() : descs.front().desc.comm_world_id;
    if (world_ranks) {
        for (auto& r : descs) {
            if (r.desc.comm_world_id == first_world) {
                first_rank = std::max(first_rank, r.desc.rank + 1);
            }
        }
    }
    std::vector<std::unique_ptr<inferior>> list;
    pid_t starter = job.starter() ? job.starter()->pid() : job.mpi2dd->directories().front().pid;
    std::error_code ec;
    auto starter_exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", starter), ec);
    int next = first_rank;
    std::set<int> used;
    auto who_of = [](const mdd::proc_desc& d) {
        return fmt::format("rank {} of {} (pid {})", d.rank, d.comm_world_id, d.pid);
    };
    std::vector<remote_rank> remote;
    std::vector<const mdd::proc_desc*> remote_desc;
    for (auto& r : descs) {
        const auto& d = r.desc;
        std::string who = who_of(d);
        bool local = is_local_host(d.host_name, s.settings().local_hosts);
        std::error_code ec2;
        auto exe = local ? std::filesystem::read_symlink(fmt::format("/proc/{}/exe", d.pid), ec2)
                         : std::filesystem::path();
        if (local && !ec && !ec2 && exe == starter_exe && std::filesystem::path(d.executable_name) != starter_exe) {
            // Forked by a directory and not exec'd yet: a later event of its directory
            // (which waits for it) acquires it.
            log::write(log::channel::cli, "MPI2DD: {} has not started {} yet", who, d.executable_name);
            continue;
        }
        auto why = local ? refusal(d.pid, d.executable_name, starter, d.host_name) : std::nullopt;
        if (why) {
            s.observer().job_warning(fmt::format("MPI2DD: not attaching to {}: {}.", who, *why));
            continue;
        }
        auto inf = std::make_unique<inferior>();
        if (local) {
            try {
                inf->process = tracer::process::attach(d.pid, s.elf_provider());
            } catch (const std::exception& e) {
                s.observer().job_warning(fmt::format("MPI2DD: cannot attach to {}: {}", who, e.what()));
                continue;
            }
            open_gate(s, *inf, who);
        }
        bool keep = world_ranks && d.comm_world_id == first_world && d.rank >= 0 && used.insert(d.rank).second;
        inf->rank = keep ? d.rank : next++;
        inf->host = d.host_name;
        inf->executable = std::filesystem::path(d.executable_name).lexically_normal();
        inf->pid = d.pid;
        if (!local) {
            remote.push_back({d.host_name, d.pid, inf.get()});
            remote_desc.push_back(&d);
        }
        job.mpi2dd->ranks()[{d.host_name, d.pid}] = r;
        list.push_back(std::move(inf));
    }
    std::vector<std::string> errors;
    auto reasons = attach_remote_ranks(s, remote, errors);
    for (auto& e : errors) {
        s.observer().job_error(e);
    }
    for (std::size_t i = 0; i < remote.size(); ++i) {
        auto& inf = *remote[i].inf;
        std::string who = who_of(*remote_desc[i]);
        if (!reasons[i].empty()) {
            s.observer().job_warning(fmt::format("MPI2DD: not attaching to {}: {}.", who, reasons[i]));
            continue;
        }
        if (!inf.process) {
            continue;   // its host's agent did not start: said once for the host
        }
        if (auto why = remote_refusal(*inf.process, *remote_desc[i])) {
            s.observer().job_warning(fmt::format("MPI2DD: not attaching to {}: {}.", who, *why));
            inf.process->detach();
            inf.process.reset();
            inf.lost = *why;
            continue;
        }
        open_gate(s, inf, who);
    }
    return list;
}

std::vector<int> ranks_of(const std::vector<std::unique_ptr<inferior>>& list) {
    std::vector<int> r;
    for (auto& inf : list) {
        r.push_back(inf->rank);
    }
    return r;
}

/// The first acquisition (START or attach): the tables' processes become the inferiors.
void adopt(session& s, std::unique_ptr<mpi_job> job) {
    auto descs = new_processes(s, *job);
    job->mpi2dd->attached_since_event.clear();   // the group takes them through helpers()
    if (descs.empty()) {
        error::send(fmt::format("{} lists no process of its MPI job (empty MPI2DD proctable).", starter_name(*job)));
    }
    auto ranks = attach_processes(s, *job, descs, 0, true);
    if (ranks.empty()) {
        error::send(fmt::format("No process of the MPI job of {} could be attached.", starter_name(*job)));
    }
    acquired_job told;
    told.ranks = ranks.size();
    told.executable = ranks.front()->executable.string();
    told.mpi2dd = true;
    told.starter = starter_name(*job);
    told.starter_pid = job->starter() ? job->starter()->pid() : 0;
    mpi_job& held = *job;
    install_job(s, std::move(job), std::move(ranks));
    // The processes as the tables name them, and the directories that list them.
    for (auto& inf : s.inferiors()) {
        const auto& d = held.mpi2dd->ranks()[{inf->host, inf->pid}];
        told.processes.push_back({inf->rank, inf->pid, d.desc.comm_world_id, d.desc.rank, d.listed_by});
    }
    for (std::size_t i = 1; i < held.mpi2dd->directories().size(); ++i) {
        told.directory_pids.push_back(held.mpi2dd->directories()[i].pid);
    }
    s.observer().job_acquired(told);
}

/// Says that MPIR is present too and not used.
void note_mpir(session& s, tracer::process& starter) {
    if (tracer::mpir::interface::find(starter)) {
        s.observer().job_interface_chosen(starter.executable().filename().string());
    }
}

std::unique_ptr<mpi_job> make_job(std::unique_ptr<tracer::process> starter, const mdd::interface& iface,
                                  bool launched) {
    pid_t pid = starter->pid();
    auto job = std::make_unique<mpi_job>(std::move(starter), tracer::mpir::interface{},
                                         std::vector<tracer::mpir::proc_desc>{}, launched);
    job->mpi2dd = std::make_unique<mpi2dd_job>(iface, launched);
    mpi2dd_job::directory self;
    self.iface = iface;
    self.pid = pid;
    job->mpi2dd->directories().push_back(std::move(self));
    return job;
}

/// A table event while the job runs: acquires the new processes and reports them. A
/// directory whose table only shrank (the flat starter is a directory: one
/// DIRECTORY_CHANGED per rank that ends) is not news to a user, who has seen the rank end:
/// that event has a JSON form only (no text).
void acquire_new(session& s, mpi_job& job, tracer::process_group* group, int state, pid_t raised_by) {
    std::vector<mpi2dd_job::rank_desc> descs;
    // Only the raiser is stopped: a directory or metadirectory that runs on may be rewriting
    // its table while the walk reads it (a string pointer already freed). Such a read fails
    // for a moment only: walk again; if it still fails, say so and report the event anyway.
    std::string unreadable;
    for (int attempt = 0; attempt < 3; ++attempt) {
        try {
            descs = new_processes(s, job);
            unreadable.clear();
            break;
        } catch (const std::exception& e) {
            unreadable = e.what();
            log::write(log::channel::cli, "MPI2DD {}: walk {} failed: {}", mdd::event_name(state), attempt + 1,
                       unreadable);
        }
    }
    if (!unreadable.empty()) {
        s.observer().job_warning(fmt::format("MPI2DD {}: {}", mdd::event_name(state), unreadable));
    }
    // Directories found now run on with the job (they raise the next events).
    std::vector<pid_t> new_dirs;
    for (auto* p : job.mpi2dd->attached_since_event) {
        new_dirs.push_back(p->pid());
        if (group && p->is_alive()) {
            group->add(*p);
            p->resume();
        }
    }
    job.mpi2dd->attached_since_event.clear();
    bool focus_all = s.focus().size() >= s.inferiors().size();
    int first = 0;
    for (auto& inf : s.inferiors()) {
        first = std::max(first, inf->rank + 1);
    }
    auto list = attach_processes(s, job, descs, first);
    mpi2dd_tables_changed told;
    told.debug_state = mdd::event_name(state);
    told.raised_by = raised_by;
    told.new_directories = new_dirs;
    if (!unreadable.empty()) {
        told.unreadable = unreadable;
    }
    for (auto& d : job.mpi2dd->directories()) {
        if (d.pid == raised_by) {
            told.listed_processes = d.last.proctable.size();
            told.listed_directories = d.last.directories.size() + d.last.metadirectories.size();
        }
    }
    if (list.empty()) {
        log::write(log::channel::cli, "MPI2DD {} in process {}: no new process", told.debug_state, raised_by);
        s.observer().job_tables_changed(told);
        return;
    }
    told.new_ranks = ranks_of(list);
    const auto& first_desc = job.mpi2dd->ranks()[{list.front()->host, list.front()->pid}].desc;
    told.comm_world = first_desc.comm_world_id;
    std::size_t saved = s.current_index();
    std::vector<std::size_t> added;
    for (auto& inf : list) {
        s.inferiors().push_back(std::move(inf));
        added.push_back(s.inferiors().size() - 1);
    }
    for (std::size_t i : added) {
        s.switch_to(i);
        plant_in_current_rank(s, job, false);
        if (focus_all) {
            s.focus().push_back(i);
        }
        if (group && focus_all) {
            s.on_resume();
            group->add(*s.inferiors()[i]->process);
            s.inferiors()[i]->process->resume();
        }
    }
    s.switch_to(saved);
    for (std::size_t i : added) {
        told.pids.push_back(s.inferiors()[i]->pid);
    }
    told.in_focus = focus_all;
    if (first_desc.spawn) {
        told.parent = mpi2dd_tables_changed::spawn_parent{first_desc.spawn->parent_comm_world_id,
                                                          first_desc.spawn->parent_rank, first_desc.spawn->sequence};
    }
    s.observer().job_tables_changed(told);
}

}  // namespace

bool is_mpi2dd_starter(const std::filesystem::path& program, const tracer::elf_provider& elves) {
    // The interface is MPI2DD_info with MPI2DD_breakpoint, in the program or a library.
    // Flags initialised in the file without I_AM_STARTER declare a rank (the reference
    // rank library's IGNORE_QUEUE): it runs as a program of its own. Flags still zero in
    // the file are filled at run time: only the START event will say (run_to_start).
    auto f = mdd::find_in_file(program, elves);
    if (!f || !f->has_breakpoint) {
        return false;
    }
    return f->initial_mpi_flags == 0 || (f->initial_mpi_flags & MPI2DD_MPIFLAG_I_AM_STARTER);
}

void start_mpi2dd_job(session& s, const std::filesystem::path& starter_path, const std::vector<std::string>& args,
                      const job_options& opts) {
    tracer::launch_options launch;
    launch.env = opts.env;             // the ranks get the front end's variables too
    launch.stdin_path = "/dev/null";   // the starter must not read the debugger's commands
    if (opts.output_to_stderr) {
        launch.stdout_fd = 2;
    }
    launch.elves = s.elf_provider();
    auto starter = tracer::process::launch(starter_path, args, launch);
    s.observer().job_starter_launched(starter->pid());
    auto iface = mdd::run_to_start(*starter);
    note_mpir(s, *starter);
    auto job = make_job(std::move(starter), iface, true);
    job->plant_breakpoints = opts.plant_breakpoints;
    adopt(s, std::move(job));
}

bool attach_mpi2dd_job(session& s, std::unique_ptr<tracer::process>& proc, const job_options& opts) {
    auto iface = mdd::interface::find(*proc);
    if (!iface) {
        return false;
    }
    auto header = iface->read_header(*proc);
    if (!header.is_starter() && !header.is_directory() && !header.is_metadirectory()) {
        return false;   // a rank: debugged as a process of its own
    }
    if (!iface->breakpoint_address()) {
        error::send(fmt::format("Process {} defines MPI2DD_info but no MPI2DD_breakpoint.", proc->pid()));
    }
    iface->set_debugger_flags(*proc, debugger_flags);
    proc->add_breakpoint_site(*iface->breakpoint_address(), true);
    note_mpir(s, *proc);
    auto job = make_job(std::move(proc), *iface, false);
    job->plant_breakpoints = opts.plant_breakpoints;
    adopt(s, std::move(job));
    return true;
}

mpi2dd_outcome mpi2dd_job_event(session& s, mpi_job& job, tracer::process_group* group,
                                const tracer::process_group::event& e) {
    auto& dd = *job.mpi2dd;
    mpi2dd_job::directory* dir = nullptr;
    for (auto& d : dd.directories()) {
        if ((d.proc && d.proc.get() == e.proc) || (!d.proc && e.proc == job.starter())) {
            dir = &d;
        }
    }
    if (!dir) {
        return mpi2dd_outcome::not_mine;
    }
    bool is_starter = !dir->proc;
    const auto& why = e.why;
    if (why.kind == tracer::stop_kind::breakpoint && why.breakpoint_addr &&
        why.breakpoint_addr == dir->iface.breakpoint_address()) {
        int state = 0;
        pid_t pid = dir->pid;
        try {
            state = dir->iface.debug_state(*e.proc);
        } catch (const std::exception& ex) {
            s.observer().job_warning(fmt::format("MPI2DD: {}", ex.what()));
        }
        log::write(log::channel::cli, "MPI2DD event {} in process {}", mdd::event_name(state), pid);
        if (state == MPI2DD_DEBUG_ABORT) {
            try {
                dd.abort_message = dir->iface.read(*e.proc).abort_string;
            } catch (const std::exception& ex) {
                dd.abort_message = fmt::format("(abort_string unreadable: {})", ex.what());
            }
            if (dd.abort_message.empty()) {
                dd.abort_message = "(no abort_string)";
            }
            return mpi2dd_outcome::abort;
        }
        if (state != MPI2DD_DEBUG_START) {
            acquire_new(s, job, group, state, pid);
        }
        if (group) {
            e.proc->resume();
        }
        return mpi2dd_outcome::handled;
    }
    if (is_starter) {
        return mpi2dd_outcome::not_mine;   // the starter's other events: handle_starter_event
    }
    if (why.is_process_end()) {
        if (group) {
            group->remove(*e.proc);
        }
        log::write(log::channel::cli, "MPI2DD directory process {} ended", dir->pid);
        return mpi2dd_outcome::handled;
    }
    if (why.kind == tracer::stop_kind::interrupted) {
        return mpi2dd_outcome::handled;   // stays stopped; the ranks report the interrupt
    }
    if (group) {
        if (why.kind == tracer::stop_kind::signal && (why.signo == SIGINT || why.signo == SIGTRAP)) {
            e.proc->set_pending_signal(why.tid, 0);
        }
        e.proc->resume();
    }
    return mpi2dd_outcome::handled;
}

}  // namespace ompdbg::debugger
