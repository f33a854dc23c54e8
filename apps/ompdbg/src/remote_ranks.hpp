#pragma once
/// Ranks of an MPI job on other hosts: the model's (ompdbg/debugger/mpi/remote_ranks.hpp),
/// named in the CLI's namespace for the commands that use them.

#include "ompdbg/debugger/mpi/remote_ranks.hpp"

namespace ompdbg::app {

using debugger::announce_remote_files;
using debugger::attach_job_ranks;
using debugger::attach_remote_ranks;
using debugger::default_remote_shell;
using debugger::has_remote_ranks;
using debugger::host_list;
using debugger::inferior;
using debugger::is_local_host;
using debugger::local_hosts_of_environment;
using debugger::no_such_process;
using debugger::reached_through;
using debugger::remote_rank;
using debugger::remote_shell;
using debugger::remote_shell_of_environment;

}  // namespace ompdbg::app
