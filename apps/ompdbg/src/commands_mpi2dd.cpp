// MPI2DD jobs: the abort report and the MPI2DD views of `mpi ranks` and `mpi directories`.
// Acquiring the job and its table events are the model's (ompdbg/debugger/mpi/
// mpi2dd_acquisition.hpp).

#include "commands_mpi2dd.hpp"

#include <set>

#include <fmt/format.h>

#include "commands_mpi.hpp"
#include "ompdbg/debugger/mpi/remote_ranks.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace mdd = tracer::mpi2dd;

void print_mpi2dd_ranks(session& s, mpi_job& job) {
    auto& dd = *job.mpi2dd;
    std::set<std::size_t> focused(s.focus().begin(), s.focus().end());
    // A job with ranks on other hosts adds each rank's host and how it is reached.
    bool across_hosts = has_remote_ranks(s);
    auto where = [&](const std::string& host, const std::string& reached) {
        return across_hosts ? fmt::format(" {:<16} {:<24}", host, reached) : std::string();
    };
    s.out().line(fmt::format("  {:<5} {:<18} {:<5}{} {:<8} {:<10} {:<28} {}", "Rank", "Comm world", "MPI",
                             where("Host", "Reached through"), "PID", "State", "Spawned by", "Executable"));
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < s.inferiors().size(); ++i) {
        auto& inf = *s.inferiors()[i];
        std::string state = rank_state(inf);
        std::string reached = reached_through(inf);
        auto it = dd.ranks().find({inf.host, inf.pid});
        mdd::proc_desc d;
        if (it != dd.ranks().end()) {
            d = it->second.desc;
        }
        std::string parent = "-";
        nlohmann::json row = {{"rank", inf.rank},
                              {"comm_world", d.comm_world_id},
                              {"world_rank", d.rank},
                              {"host", inf.host},
                              {"pid", inf.pid},
                              {"state", state},
                              {"reached", reached},
                              {"executable", inf.executable.string()},
                              {"focused", focused.count(i) > 0},
                              {"listed_by", it != dd.ranks().end() ? it->second.listed_by : 0}};
        if (!inf.lost.empty()) {
            row["lost"] = inf.lost;
        }
        if (d.spawn) {
            parent = fmt::format("{}:{} (spawn {})", d.spawn->parent_comm_world_id, d.spawn->parent_rank,
                                 d.spawn->sequence);
            row["parent"] = {{"comm_world", d.spawn->parent_comm_world_id},
                             {"rank", d.spawn->parent_rank},
                             {"sequence", d.spawn->sequence}};
        }
        s.out().line(fmt::format("{} {:<5} {:<18} {:<5}{} {:<8} {:<10} {:<28} {}", focused.count(i) ? "*" : " ",
                                 inf.rank, d.comm_world_id, d.rank, where(inf.host, reached.empty() ? "-" : reached),
                                 inf.pid, state, parent, inf.executable.string()));
        rows.push_back(std::move(row));
    }
    s.out().field("ranks", rows);
}

namespace {

void cmd_mpi_directories(session& s, std::string_view) {
    auto* job = s.job();
    if (!job || !job->mpi2dd) {
        error::send("No MPI2DD job is being debugged.");
    }
    s.out().line(fmt::format("  {:<8} {:<26} {:<6} {:<6} {}", "PID", "Role", "Procs", "Dirs", "Executable"));
    nlohmann::json rows = nlohmann::json::array();
    for (auto& d : job->mpi2dd->directories()) {
        tracer::process* p = d.proc ? d.proc.get() : job->starter();
        std::string exe = p ? p->executable().string() : std::string();
        std::string role = mdd::describe_mpi_flags(d.last.mpi_flags);
        bool alive = p && p->is_alive();
        s.out().line(fmt::format("  {:<8} {:<26} {:<6} {:<6} {}{}", d.pid, role, d.last.proctable.size(),
                                 d.last.directories.size() + d.last.metadirectories.size(), exe,
                                 alive ? "" : " (ended)"));
        rows.push_back({{"pid", d.pid},
                        {"mpi_flags", role},
                        {"processes", d.last.proctable.size()},
                        {"directories", d.last.directories.size()},
                        {"metadirectories", d.last.metadirectories.size()},
                        {"executable", exe},
                        {"alive", alive}});
    }
    s.out().field("directories", rows);
}

}  // namespace

void register_mpi2dd_commands(command_table& t) {
    auto& mpi = t.prefix("mpi", {}, "MPI job commands (ranks, stacks, message queues).");
    mpi.add({"directories", {}, "List the MPI2DD starter, directory and metadirectory processes of the job.",
             "mpi directories\nThe processes whose MPI2DD_info lists the job (starter, directories, "
             "metadirectories): pid, role (mpi_flags), how many processes and directories each lists.",
             cmd_mpi_directories, false, nullptr});
}

}  // namespace ompdbg::app
