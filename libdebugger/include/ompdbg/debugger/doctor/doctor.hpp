#pragma once
/// The checks of `ompdbg doctor [PROG | PID | --host HOST [PID]]`: every piece that OpenMP and MPI debugging needs
/// (ptrace permission, the OpenMP runtime and its OMPD symbols, OMP_DEBUG, libompd, the
/// DMPL plugins, MPIR/MPI2DD in a starter, the message-queue DLL and the types it needs,
/// debug information), each returned with what it found and, when something is missing,
/// why and how to fix it. The report is rendered by the front end (apps/ompdbg/src/doctor.cpp).

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/session/plugin_trust_policy.hpp"
#include "ompdbg/tracer/rsp_client.hpp"

namespace ompdbg::debugger {

enum class doctor_status {
    ok,       ///< present and usable
    info,     ///< not needed here, or nothing to check
    warn,     ///< works partly, or works only with a setting the user must give
    missing,  ///< a piece is missing: that kind of debugging will not work
};

/// One finding: what was checked, what was found, and how to fix it when it is not ok.
struct doctor_check {
    std::string name;
    doctor_status status = doctor_status::info;
    std::string found;
    std::string fix;
};

/// What the doctor looks at: the machine (nothing given), a program, or a running process;
/// with `host`, that host (through the agent `rsh` starts there) or a process of it.
struct doctor_subject {
    std::optional<std::filesystem::path> program;
    std::optional<pid_t> pid;
    std::optional<std::string> host;
    std::string rsh;   ///< the remote shell reaching `host`
};

/// Runs every check for `subject`. Never throws: a check that cannot be done is itself a
/// finding. `policy` is the session's plugin policy (--plugin-path).
std::vector<doctor_check> run_doctor(const doctor_subject& subject, const plugin_trust_policy& policy);

/// The qSupported features ompdbg needs of a gdbserver agent that `have` lacks, spelled as
/// gdbserver announces them ("qXfer:libraries-svr4:read+"), in a fixed order.
std::vector<std::string> missing_agent_features(const tracer::rsp::features& have);

}  // namespace ompdbg::debugger
