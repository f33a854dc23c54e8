#pragma once
/// OpenMP through DMPL (issue 5): the DMPL library of the target's OpenMP runtime (ompdbg's
/// plugins/dmpl-libomp or plugins/dmpl-libgomp, or `--dmpl-library PATH` / `set
/// dmpl-library PATH`), and what the user sees through it: each thread's copy of a
/// threadprivate variable (`print a`, `print &a`, `omp threadprivate a`), `bt` with the
/// runtime's frames folded into one `[omp parallel in main at fig8.c:21, thread 2 of 4]`
/// line, `info locals` of outlined regions with source names and scoping, DMPL lines in
/// `omp info`, and `omp threads` / `omp parallel` for libgomp (which has no OMPD).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "command_table.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/dwarf/value.hpp"

namespace ompdbg::app {

class session;

/// Registers `omp threadprivate`, `set dmpl-library`, and wraps `bt`, `info locals`,
/// `omp info`, `omp threads`, `omp parallel`, `omp bt` (call after the stack and omp groups).
void register_dmpl_commands(command_table& t);

}  // namespace ompdbg::app
