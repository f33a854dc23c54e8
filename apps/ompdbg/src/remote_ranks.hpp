#pragma once
/// Ranks of an MPI job on other hosts (issue 18): which hosts are this one, the remote
/// shell that starts the agents, and attaching a job's ranks — local ones with ptrace, the
/// others through ONE gdbserver agent per host (`RSH HOST gdbserver --multi -`), the
/// agents of different hosts started and attached concurrently. A remote host's pid is
/// never looked up here.

#include <memory>
#include <string>
#include <vector>

#include "ompdbg/tracer/mpir.hpp"

namespace ompdbg::tracer {
class remote_connection;
}

namespace ompdbg::app {

class session;
struct inferior;

/// ssh's own way of running a command on a host without a terminal or a password prompt.
inline constexpr const char* default_remote_shell = "ssh -T -o BatchMode=yes";

/// The remote shell in effect: `set remote-shell`, else OMPDBG_RSH (which `--rsh` sets),
/// else default_remote_shell.
std::string remote_shell(session& s);

/// Whether `host` names this machine: its host name, its FQDN (either compared by its first
/// label too), `localhost`, a loopback address, or an alias of `set mpi-local-hosts`.
bool is_local_host(const std::string& host, const std::vector<std::string>& aliases);

/// How a rank is reached, for `mpi ranks`: "ptrace", "gdbserver via HOST"; empty when it
/// has no process.
std::string reached_through(const inferior& inf);

/// Has the files that processes of `conn` fetch from its host announced as gdb does, one
/// line each before the fetch: "Reading PATH from remote target...".
void announce_remote_files(session& s, tracer::remote_connection& conn);

/// Attaches every rank of `table`, each stopped on return. A local rank that cannot be
/// attached throws ("Cannot attach to rank N (pid P on HOST): ..."), as before; a remote
/// one whose host, agent or pid fails is listed without a process (`lost` says why) and its
/// one line, naming the host, is appended to `errors`: the rest of the job stays debuggable.
std::vector<std::unique_ptr<inferior>> attach_job_ranks(session& s, const std::vector<tracer::mpir::proc_desc>& table,
                                                        std::vector<std::string>& errors);

}  // namespace ompdbg::app
