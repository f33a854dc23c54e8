#pragma once
/// MPI jobs (issue 6) on the command line: `run -- mpirun ...`, `attach MPIRUN_PID`, `mpi
/// attach PID` acquire every rank through the model (ompdbg/debugger/mpi/job_acquisition.hpp,
/// mpi2dd_acquisition.hpp), one inferior per rank with a focus (`rank N`, `rank 0-3,6`, `rank all`), job-wide run control (continue resumes
/// every focused rank and the starter, Ctrl-C stops them all), `mpi ranks` and `mpi stacks`.
/// The message-queue commands (`mpi queues`, `mpi deadlock`) add themselves to the same
/// `mpi` prefix (t.prefix("mpi")) and walk the ranks with for_each_focused_rank().

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.hpp"
#include "ompdbg/debugger/mpi/job_acquisition.hpp"
#include "ompdbg/debugger/mpi/job_run_control.hpp"
#include "ompdbg/debugger/mpi/mpi_job.hpp"
#include "ompdbg/debugger/mpi/rank_ends.hpp"
#include "ompdbg/debugger/mpi/rank_list.hpp"
#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/mpir.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/process_group.hpp"

namespace ompdbg::app {

class session;
using debugger::inferior;
using debugger::mpi_job;

/// Registers `mpi ranks|stacks|attach`, `rank`.
void register_mpi_commands(command_table& t);

// Acquiring and ending a job: the model's (ompdbg/debugger/mpi/job_acquisition.hpp).
using debugger::attach_mpi_job;
using debugger::end_job;
using debugger::install_job;
using debugger::is_mpi_starter;
using debugger::job_options;
using debugger::start_mpi_job;

/// What the model's job acquisition needs of the CLI: the breakpoints it plants in each
/// rank (breakpoint_resolver's refresh_breakpoints) and, for a starter it launches
/// (`launching`), the OpenMP and breakpoint-agent environment and, with --json, the job's
/// stdout on stderr.
job_options cli_job_options(session& s, bool launching);

/// Whether the session debugs an MPI job (ranks are inferiors).
bool is_mpi_session(session& s);
/// The model's for_each_focused_rank (ompdbg/debugger/mpi/rank_focus.hpp): `fn` with each
/// focused rank current in turn, the current inferior restored afterwards. `label`: prints
/// "[rank N]" before each when more than one rank is focused.
void for_each_focused_rank(session& s, bool label, const std::function<void(inferior&)>& fn);
// How ranks and the starter end, and a rank's state: the model's
// (ompdbg/debugger/mpi/rank_ends.hpp).
using debugger::handle_starter_event;
using debugger::inferior_of;
using debugger::rank_state;
using debugger::record_rank_end;
// The rank lists of the model (ompdbg/debugger/mpi/rank_list.hpp).
using debugger::breakpoint_ranks_of_focus;
using debugger::format_rank_list;
using debugger::parse_rank_list;
using debugger::split_rank_clause;

/// Commands that act once for the whole job, never per rank (run control, breakpoints,
/// settings but `set var`, `info breakpoints`, `mpi`, `rank`). Others run once per focused
/// rank, labelled.
bool is_job_wide_command(const std::string& name, std::string_view args);

/// Runs command `name` (resolved top-level name) with `handler` the way an MPI session
/// wants: job-wide commands once (then breakpoint changes are planted in every rank),
/// others once per focused rank, labelled. Returns false when it failed in some rank (the
/// errors are printed per rank).
bool mpi_execute(session& s, const std::string& name, std::string_view args, const std::function<void()>& handler);

/// `continue` for an MPI session: the model's continue_job (pending hits of focused ranks
/// first, otherwise every focused rank and the starter run until the first stop a user must
/// see), its stops shown as gdb shows them; a stop whose breakpoint commands resume lets
/// the job run again.
void mpi_continue_until_stop(session& s);

// Planting the breakpoints in the current rank: the model's
// (ompdbg/debugger/mpi/job_run_control.hpp).
using debugger::sync_current_rank;

}  // namespace ompdbg::app
