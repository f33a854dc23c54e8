#pragma once
/// `omp compare`, `thread compare`, `mpi compare`, `thread where`, `rank where` (issue 20).

#include "command_table.hpp"

namespace ompdbg::app {

/// Adds the commands to the `omp`, `thread`, `mpi` and `rank` prefixes: register after the
/// groups that create those.
void register_compare_commands(command_table& t);

}  // namespace ompdbg::app
