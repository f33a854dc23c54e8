#pragma once
/// `ompdbg triage PID | --core PROG CORE` (issue 10): attaches to a process or to an MPI
/// starter and every rank of its job (or opens a core), gathers, detaches, and prints one
/// report: per process a merged tree of every thread's stack labelled with its OpenMP state
/// and region, the merged tree across ranks with rank ranges, the message queues, the
/// deadlock cycles of the wait-for graph, which threads moved between samples, and a
/// verdict whose kind is also the exit status (triage_exit).

#include <string>
#include <vector>

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::app {

/// Runs `ompdbg triage ARGS...` (the words after `triage`); `json` from the global --json.
/// Prints the report (text, or one JSON document) and returns a triage_exit
/// (libdebugger's triage/triage_model.hpp).
int triage_main(const std::vector<std::string>& args, bool json, const debugger::plugin_trust_policy& policy);

}  // namespace ompdbg::app
