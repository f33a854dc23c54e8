#pragma once
/// OpenMP commands through OMPD (issue 4): `omp info|threads|parallel|tasks|icvs`,
/// `catch omp EVENT`, `set plugin-path DIR`, `set ompd-library PATH`.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.hpp"

namespace ompdbg::tracer {
struct loaded_module;
}

namespace ompdbg::app {

class session;

/// Registers the `omp` prefix command, `catch omp ...` and the OMPD settings.
void register_omp_commands(command_table& t);

/// The report of a `catch omp EVENT` hit in thread `tid` ("parallel-begin", ...): the region
/// or task that begins or ends, with its team size and source location. Never throws.
std::string omp_describe_event(session& s, pid_t tid, std::string_view event);

/// `--ompd-library PATH` from the command line (main.cpp). The plugin trust policy
/// (`--plugin-path`, `set plugin-path`) is the session's: session::plugin_policy().
void omp_set_ompd_library(session& s, const std::string& path);

/// The environment `run` adds for OpenMP targets: OMP_DEBUG=enabled unless the user's
/// environment (or `env`, the entries run already adds) sets OMP_DEBUG.
std::vector<std::string> omp_launch_environment(const std::vector<std::string>& env);

}  // namespace ompdbg::app
