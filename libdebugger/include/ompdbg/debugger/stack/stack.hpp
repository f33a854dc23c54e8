#pragma once
/// The stack as the user sees it: physical frames from the unwinder, each expanded into
/// its inlined frames (innermost first), with function, source line and module resolved.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ompdbg/debugger/stack/stack_frame.hpp"
#include "ompdbg/dwarf/debug_info.hpp"
#include "ompdbg/tracer/target.hpp"
#include "ompdbg/tracer/unwinder.hpp"

namespace ompdbg::debugger {

class session;

/// Builds the user-visible stack of thread `tid` (cached by the session until resume).
/// Like gdb (`backtrace past-main` off) it ends at main. Never throws for a corrupt stack:
/// it ends at the first frame the unwinder cannot recover.
std::vector<stack_frame> build_stack(session& s, pid_t tid, std::size_t max_frames = 256);

/// The function name gdb shows for a frame ("factorial", "ns::k::f", the minimal symbol
/// "__libc_start_call_main"), or "??" when nothing is known.
std::string frame_function_name(const stack_frame& f);

/// True when gdb would print the frame's pc: the innermost virtual frame of a caller
/// frame, or of frame 0 when the pc is not the first address of its line-table row, that
/// row is not a statement (gdb's frame_show_address), or it has no line info. Callers of
/// inlined frames never show it.
bool frame_shows_pc(const stack_frame& f);

/// True when the frame's pc is the first address of its line-table row and that row is a
/// statement (gdb prints no pc before the source line after a step there).
bool pc_starts_statement(const stack_frame& f);

/// "n=5, p=0x7ffe..." for the frame's arguments, formatted as gdb's `bt` (values through
/// dwarf::format_value; "<optimized out>", errors as "<error: ...>"). Empty when the
/// frame has no DWARF function or no arguments.
std::string format_frame_args(session& s, const stack_frame& f);

/// The name gdb shows for source file `path` (a full path from the line table) of module
/// `m`: the compilation unit's name as written when relative ("prog.c"), else `path`.
std::string source_display_name(const tracer::loaded_module* m, const std::string& path);
/// The same, for a file of any module of the session's target (or of its program).
std::string source_display_name(session& s, const std::string& path);

}  // namespace ompdbg::debugger
