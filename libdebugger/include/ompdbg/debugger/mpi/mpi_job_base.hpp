#pragma once
/// What the model's session needs of the MPI job it holds.

namespace ompdbg::debugger {

/// An MPI job the session holds: the starter process and the ranks' table. Its full type
/// is mpi_job (mpi_job.hpp: starter, MPIR interface, proctable, MPI2DD directories); a job
/// the model makes itself without a starter (triage's attached ranks) derives from this
/// too. The session owns it through this base.
class mpi_job_base {
public:
    virtual ~mpi_job_base() = default;
    /// Launched by us (`run -- mpirun`: the job dies with the session) or attached (the
    /// ranks are detached and go on).
    virtual bool launched() const = 0;
};

}  // namespace ompdbg::debugger
