#pragma once
// libdebugger's side of omp/dmpl_runtime.hpp: the DMPL view of the session's target, a
// plugin host object that only the model's own files use (threadprivate copies, the stack
// folding, the libgomp threads). Not a public header: the front ends see DMPL through the
// model's functions (issue 19).

#include "ompdbg/debugger/omp/dmpl_runtime.hpp"
#include "ompdbg/plugins/dmpl_host.hpp"

namespace ompdbg::debugger {

/// The DMPL view of the session's target, created on first use; nullptr when the target has
/// no OpenMP runtime (`required`: throw instead). Throws one line when the library cannot
/// be loaded.
plugins::dmpl_process* dmpl_for(session& s, bool required);

/// As dmpl_for, but a library that cannot be loaded is logged and gives nullptr (for views
/// that work without DMPL).
plugins::dmpl_process* dmpl_quiet(session& s);

}  // namespace ompdbg::debugger
