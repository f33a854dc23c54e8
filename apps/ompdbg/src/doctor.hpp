#pragma once
/// `ompdbg doctor [PROG | PID | --host HOST [PID]]`: the report of the model's checks
/// (ompdbg/debugger/doctor/doctor.hpp): for each piece OpenMP and MPI debugging needs, what
/// was found and, when something is missing, why and how to fix it.

#include <string>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::app {

/// The `ompdbg doctor` entry point: parses `args` (empty, PROG, PID, or `--host HOST [PID]`:
/// the remote shell is OMPDBG_RSH, which `--rsh` sets), prints the report
/// as text or one JSON object, and returns the exit status: 0 when nothing is missing,
/// 1 when something is, 2 for a usage error.
int doctor_main(const std::vector<std::string>& args, bool json, const debugger::plugin_trust_policy& policy);

}  // namespace ompdbg::app
