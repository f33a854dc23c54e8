#pragma once
/// Ranks of an MPI job on other hosts (issue 18): which hosts are this one, the remote
/// shell that starts the agents, and attaching a job's ranks — local ones with ptrace, the
/// others through ONE gdbserver agent per host (`RSH HOST gdbserver --multi -`), the
/// agents of different hosts started and attached concurrently. A remote host's pid is
/// never looked up here.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/debugger/session/session_fwd.hpp"
#include "ompdbg/tracer/mpir.hpp"

namespace ompdbg::tracer {
class remote_connection;
}

namespace ompdbg::debugger {

/// ssh's own way of running a command on a host without a terminal or a password prompt.
inline constexpr const char* default_remote_shell = "ssh -T -o BatchMode=yes";

/// The remote shell in effect: `set remote-shell`, else remote_shell_of_environment().
std::string remote_shell(session& s);
/// OMPDBG_RSH (which `--rsh` sets), else default_remote_shell: the remote shell outside a
/// session (`ompdbg doctor --host`).
std::string remote_shell_of_environment();

/// Host names separated by commas (`set mpi-local-hosts`), blanks around each dropped.
std::vector<std::string> host_list(std::string_view text);
/// OMPDBG_MPI_LOCAL_HOSTS (the same list as `set mpi-local-hosts`), read by every session at
/// start: `ompdbg attach STARTER_PID` of a job whose node names differ from this host's
/// (Slurm's) needs them before the attach, which no command can precede.
std::vector<std::string> local_hosts_of_environment();

/// Whether `host` names this machine: its host name, its FQDN (either compared by its first
/// label too), `localhost`, a loopback address, or an alias of `set mpi-local-hosts`.
bool is_local_host(const std::string& host, const std::vector<std::string>& aliases);

/// Whether some rank of the session's job names another host (`mpi ranks` then shows how
/// each rank is reached; a job on this host alone keeps the table it always had).
bool has_remote_ranks(session& s);

/// How a rank is reached, for `mpi ranks`: "ptrace", "gdbserver via HOST"; empty when it
/// has no process.
std::string reached_through(const inferior& inf);

/// Has the files that processes of `conn` fetch from its host announced, each before the
/// fetch, to the session's observer (remote_file_fetch: gdb's "Reading PATH from remote
/// target...").
void announce_remote_files(session& s, tracer::remote_connection& conn);

/// "process P does not exist on host H": the one reason given for a pid that a job's table
/// names and its host does not have.
std::string no_such_process(pid_t pid, const std::string& host);

/// A rank of another host to reach, and the inferior (already listed) that receives it.
struct remote_rank {
    std::string host;
    pid_t pid = 0;
    inferior* inf = nullptr;
};

/// Attaches `rows`, ranks of other hosts, through ONE agent per host (`RSH HOST gdbserver
/// --multi -`), the hosts at once, each host's ranks on a thread of its own. Each inferior
/// gets its process, or none with `lost` saying why. A host whose agent does not start is
/// one line in `errors` ("Cannot reach rank 2-3 on host node2: ..."); the returned reasons
/// (index as `rows`, empty when attached or when the agent failed) are for the caller's
/// one line per rank; a pid its host does not have gets no_such_process.
std::vector<std::string> attach_remote_ranks(session& s, const std::vector<remote_rank>& rows,
                                             std::vector<std::string>& errors);

/// Attaches every rank of `table`, each stopped on return. A rank whose host, agent or pid
/// fails is listed without a process (`lost` says why) and its one line, naming the rank,
/// pid and host ("Cannot attach to rank N (pid P on HOST): ..."), is appended to `errors`:
/// the rest of the job stays debuggable.
std::vector<std::unique_ptr<inferior>> attach_job_ranks(session& s, const std::vector<tracer::mpir::proc_desc>& table,
                                                        std::vector<std::string>& errors);

}  // namespace ompdbg::debugger
