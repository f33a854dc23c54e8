#pragma once
/// How stacks of OpenMP threads are shown (issue 17): the frame rows `bt` and `omp bt`
/// share and the separator of a stitched stack (the `omp-bt-filter` setting is the
/// model's: libdebugger's omp/stack_folding.hpp).

#include <sys/types.h>

#include <string>

#include <nlohmann/json.hpp>

#include "frame_line.hpp"

namespace ompdbg::app {

class session;

/// The JSON of a frame in a backtrace: `{level, pc, function, file?, line?}` (docs/json.md).
nlohmann::json frame_json(const stack_frame& f);

/// The line that marks where a worker's stitched stack (`omp bt continued`) goes on in the
/// thread that encountered the construct; the frames after it carry that thread's own
/// numbers ("---- continued in thread 1 (LWP 4242), which encountered the construct; ...").
std::string continued_separator(session& s, pid_t encountering_tid);

}  // namespace ompdbg::app
