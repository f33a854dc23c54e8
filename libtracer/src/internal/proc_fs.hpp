#pragma once
// The tracer's /proc reading is public (ompdbg/tracer/proc_fs.hpp); internal code keeps
// calling it as internal::read_maps etc.

#include "ompdbg/tracer/proc_fs.hpp"

namespace ompdbg::tracer::internal {
using namespace ompdbg::tracer::proc_fs;
}  // namespace ompdbg::tracer::internal
