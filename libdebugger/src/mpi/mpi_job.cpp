// An MPI job's starter and MPI2DD directory processes, ended with the job.

#include "ompdbg/debugger/mpi/mpi_job.hpp"

#include <exception>

#include "ompdbg/base/log.hpp"
#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

mpi_job::mpi_job(std::unique_ptr<tracer::process> starter, tracer::mpir::interface iface,
                 std::vector<tracer::mpir::proc_desc> table, bool launched)
    : starter_(std::move(starter)), mpir_(iface), table_(std::move(table)), launched_(launched) {}

mpi_job::~mpi_job() {
    if (starter_ && starter_->is_alive()) {
        try {
            if (launched_) {
                starter_->kill();
            } else {
                starter_->detach();
            }
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "ending the MPI starter: {}", e.what());
        }
    }
}

void mpi_job::drop_starter() {
    starter_.reset();
}

mpi2dd_job::mpi2dd_job(tracer::mpi2dd::interface starter, bool launched) : starter_(starter), launched_(launched) {}

mpi2dd_job::~mpi2dd_job() {
    for (auto& d : dirs_) {
        if (!d.proc || !d.proc->is_alive()) {
            continue;
        }
        try {
            launched_ ? d.proc->kill() : d.proc->detach();
        } catch (const std::exception& e) {
            log::write(log::channel::cli, "ending MPI2DD directory {}: {}", d.pid, e.what());
        }
    }
}

std::vector<tracer::process*> mpi2dd_job::helpers() {
    std::vector<tracer::process*> out;
    for (auto& d : dirs_) {
        if (d.proc && d.proc->is_alive()) {
            out.push_back(d.proc.get());
        }
    }
    return out;
}

// dynamic_cast: a job the model made itself (triage's ranks without their starter) is no
// mpi_job, and the commands must not take it for one.
mpi_job* job_of(session& s) {
    return dynamic_cast<mpi_job*>(s.job());
}

}  // namespace ompdbg::debugger
