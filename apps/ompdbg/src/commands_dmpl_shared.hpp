#pragma once
// Shared by the files of the OpenMP view through DMPL (the target's OpenMP runtime, its
// DMPL library and the runtime's frames in a stack are the model's: libdebugger's
// omp/dmpl_runtime.hpp and omp/stack_folding.hpp): the folded backtrace
// (omp_folded_backtrace.cpp) and the commands built on them (commands_dmpl.cpp,
// commands_omp_threadprivate.cpp, outlined_locals.cpp, gomp_views.cpp). What they ask of the
// DMPL library is libdebugger's (omp/dmpl_runtime, omp/outlined_locals): no file of apps/
// includes the DMPL API (issue 19).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "session.hpp"
#include "frame_line.hpp"
#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/debugger/omp/stack_folding.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/target.hpp"

namespace ompdbg::app::dmpl_impl {

// ---- the runtime's frames folded (omp_folded_backtrace.cpp, over libdebugger's
// omp/stack_folding.hpp) -------------------------------------------------------------------

/// `bt` with the OpenMP runtime folded (`continued`: `omp bt continued`): true when it
/// printed (the stack runs an outlined routine), false to let the ordinary backtrace print.
bool folded_backtrace(session& s, bool continued);

// ---- the commands and views built on them ----------------------------------------------

/// `omp threadprivate NAME` (commands_omp_threadprivate.cpp).
void cmd_omp_threadprivate(session& s, std::string_view args);

/// `info locals` of an outlined region: the user's variables by source name with their
/// scoping; false when the selected frame is no outlined routine.
bool outlined_locals(session& s);   // outlined_locals.cpp

/// `omp threads` of a libgomp program, from DMPL and the threads' stacks (gomp_views.cpp).
void gomp_omp_threads(session& s, fold_context& fc, const tracer::loaded_module* rt);

/// `omp parallel` of a libgomp program (gomp_views.cpp).
void gomp_omp_parallel(session& s, fold_context& fc, const tracer::loaded_module* rt);

}  // namespace ompdbg::app::dmpl_impl
