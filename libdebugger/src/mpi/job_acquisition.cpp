// MPI jobs through MPIR: launching or attaching the starter, attaching its ranks, adopting
// them into the session, and ending the job.

#include "ompdbg/debugger/mpi/job_acquisition.hpp"

#include <chrono>
#include <exception>
#include <set>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/debugger/mpi/job_events.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "ompdbg/debugger/breakpoints/breakpoint_resolver.hpp"
#include "ompdbg/debugger/session/inferior.hpp"
#include "ompdbg/debugger/session/session.hpp"
#include "ompdbg/tracer/mpir.hpp"

namespace ompdbg::debugger {

void plant_in_current_rank(session& s, mpi_job& job, bool live_only) {
    if (live_only && !(s.process() && s.process()->is_alive())) {
        return;
    }
    try {
        if (job.plant_breakpoints) {
            job.plant_breakpoints(s);
        } else {
            refresh_breakpoints(s, false);
        }
    } catch (const std::exception& e) {
        s.observer().job_error(fmt::format("[rank {}] {}", s.current_inferior().rank, e.what()));
    }
}

void install_job(session& s, std::unique_ptr<mpi_job> job, std::vector<std::unique_ptr<inferior>> ranks) {
    std::size_t n = ranks.size();
    std::string exe = ranks.empty() ? std::string() : ranks.front()->executable.string();
    if (!s.program() && !exe.empty()) {
        try {
            s.set_program(exe, {});
        } catch (const std::exception& e) {
            s.observer().job_error(e.what());
        }
    }
    mpi_job& held = *job;
    s.set_inferiors(std::move(ranks));
    s.set_job(std::move(job));
    s.count_start();
    for (std::size_t i = 0; i < n; ++i) {
        s.switch_to(i);
        plant_in_current_rank(s, held);
    }
    s.switch_to(0);
}

namespace {

/// Attaches every rank of `table` (each is stopped on return) into inferiors; their
/// modules' ELF files come from the session's cache (one reader per file for the job).
/// Ranks of other hosts go through their host's agent (remote_ranks.hpp); one that cannot
/// be reached is listed as lost, with one job_error naming its host.
std::vector<std::unique_ptr<inferior>> attach_ranks(session& s, const std::vector<tracer::mpir::proc_desc>& table) {
    std::vector<std::string> errors;
    auto list = attach_job_ranks(s, table, errors);
    for (auto& e : errors) {
        s.observer().job_error(e);
    }
    return list;
}

/// Makes the ranks the session's inferiors, plants the breakpoints in each, says so.
void adopt_job(session& s, std::unique_ptr<mpi_job> job, std::vector<std::unique_ptr<inferior>> ranks) {
    acquired_job told;
    told.ranks = ranks.size();
    told.executable = ranks.empty() ? std::string() : ranks.front()->executable.string();
    if (auto* st = job->starter()) {
        told.starter = st->executable().filename().string();
        told.starter_pid = st->pid();
    }
    install_job(s, std::move(job), std::move(ranks));
    s.observer().job_acquired(told);
}

/// A starter attached before every task has answered its launch (srun writes each pid into
/// MPIR_proctable as its task's answer comes; mpirun sets the table once all are spawned)
/// runs on until the table is complete, for up to `set mpi-spawn-timeout` seconds. False,
/// with a warning, when it is not by then: the starter alone is debugged, as a process.
bool wait_for_tasks_started(session& s, tracer::process& starter, const tracer::mpir::interface& iface) {
    auto progress = iface.progress(starter);
    // No table in a process that is no starter: an Open MPI rank carries the same MPIR
    // symbols (libopen-rte) and never gets one. The table's reader says why it is no job.
    if (progress.complete() || (progress.size == 0 && !is_mpi_starter(starter.executable()))) {
        return true;
    }
    std::string name = starter.executable().filename().string();
    auto limit = s.settings().mpi_spawn_timeout;
    s.observer().job_tasks_waiting({name, starter.pid(), progress.with_pid, progress.size});
    // Unlimited: a year, a deadline that cannot overflow the clock; Ctrl-C ends it.
    std::chrono::milliseconds wait = limit ? std::chrono::seconds(*limit) : std::chrono::hours(24 * 365);
    progress = tracer::mpir::run_until_proctable_complete(starter, iface, wait);
    if (progress.complete()) {
        return true;
    }
    s.observer().job_warning(fmt::format("{} (process {}) has not started its MPI job's tasks ({} of {} in "
                                         "MPIR_proctable{}): debugging {} alone.",
                                         name, starter.pid(), progress.with_pid, progress.size,
                                         limit ? fmt::format(" after {} s", *limit) : std::string(), name));
    return false;
}

}  // namespace

bool is_mpi_starter(const std::filesystem::path& program) {
    // Slurm's srun implements MPIR (MPIR_proctable, MPIR_Breakpoint) as mpirun does.
    static const std::set<std::string> names = {"mpirun", "mpiexec", "orterun", "mpirun.openmpi",
                                                "mpiexec.openmpi", "prterun", "srun"};
    std::error_code ec;
    auto real = std::filesystem::canonical(program, ec);
    return names.count(program.filename().string()) || (!ec && names.count(real.filename().string()));
}

void start_mpi_job(session& s, const std::filesystem::path& starter_path, const std::vector<std::string>& args,
                   const job_options& opts) {
    tracer::launch_options launch;
    launch.env = opts.env;
    // Open MPI warns that MPIR is deprecated on every start; the user did not ask for that.
    launch.env.push_back("OMPI_MPIR_DO_NOT_WARN=1");
    // mpirun forwards its stdin to rank 0: it would eat the debugger's own commands.
    launch.stdin_path = "/dev/null";
    if (opts.output_to_stderr) {
        launch.stdout_fd = 2;
    }
    auto starter = tracer::process::launch(starter_path, args, launch);
    auto iface = tracer::mpir::run_to_spawn(*starter);
    auto table = iface.proctable(*starter);
    auto ranks = attach_ranks(s, table);
    // The ranks wait in MPI_Init for the starter to return from MPIR_Breakpoint; they stay
    // stopped under ptrace until the first continue releases the whole job together.
    auto job = std::make_unique<mpi_job>(std::move(starter), iface, std::move(table), true);
    job->plant_breakpoints = opts.plant_breakpoints;
    adopt_job(s, std::move(job), std::move(ranks));
}

bool attach_mpi_job(session& s, std::unique_ptr<tracer::process>& proc, bool required, const job_options& opts) {
    auto not_starter = [&](const std::string& why) -> bool {
        if (required) {
            error::send(fmt::format("Process {} ({}) is not an MPI starter: {}", proc->pid(),
                                    proc->executable().filename().string(), why));
        }
        return false;
    };
    auto iface = tracer::mpir::interface::find(*proc);
    if (!iface) {
        return not_starter("it has no MPIR_Breakpoint/MPIR_proctable.");
    }
    if (!wait_for_tasks_started(s, *proc, *iface)) {
        return false;
    }
    std::vector<tracer::mpir::proc_desc> table;
    try {
        table = iface->proctable(*proc);
    } catch (const std::exception& e) {
        return not_starter(e.what());
    }
    iface->set_being_debugged(*proc, true);
    auto ranks = attach_ranks(s, table);
    auto job = std::make_unique<mpi_job>(std::move(proc), *iface, std::move(table), false);
    job->plant_breakpoints = opts.plant_breakpoints;
    adopt_job(s, std::move(job), std::move(ranks));
    return true;
}

void end_job(session& s, bool kill) {
    std::size_t n = 0;
    for (auto& inf : s.inferiors()) {
        auto* p = inf->process.get();
        if (!p || !p->is_alive()) {
            continue;
        }
        try {
            kill ? p->kill() : p->detach();
            ++n;
        } catch (const std::exception& e) {
            s.observer().job_error(fmt::format("[rank {}] {}", inf->rank, e.what()));
        }
    }
    if (auto* job = job_of(s); job && job->starter() && job->starter()->is_alive()) {
        try {
            kill ? job->starter()->kill() : job->starter()->detach();
        } catch (const std::exception& e) {
            s.observer().job_error(e.what());
        }
        job->drop_starter();
    }
    s.observer().job_ended(n, kill);
    s.end_target();
}

}  // namespace ompdbg::debugger
