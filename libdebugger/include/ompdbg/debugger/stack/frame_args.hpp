#pragma once
/// How gdb reads a frame's arguments (print_frame_args, info args).

#include <vector>

#include "ompdbg/dwarf/debug_info.hpp"

namespace ompdbg::debugger {

/// The variable whose value gdb shows for argument `param`: a local of the same name in
/// the frame when there is one (gdb looks the name up again, and a function block prefers
/// its locals: clang's outlined routines have a parameter and a private copy both named
/// after a reduction variable), else the argument itself.
const dwarf::variable& value_source(const dwarf::variable& param, const std::vector<dwarf::variable>& locals);

}  // namespace ompdbg::debugger
