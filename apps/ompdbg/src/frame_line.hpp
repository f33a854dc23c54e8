#pragma once
/// gdb's frame lines as the CLI prints them: the model's stack (libdebugger's
/// stack/stack.hpp) rendered with the session's output styles.

#include <optional>
#include <string>

#include "ompdbg/debugger/stack/stack.hpp"

namespace ompdbg::app {

class session;

/// The frame type is the model's (libdebugger); the app names it as before.
using debugger::stack_frame;

/// gdb's frame line, used by bt, frame, up/down and stop reports:
///   "#1  0x0000555555555189 in factorial (n=5) at structs.c:42"
///   "#0  factorial (n=5) at structs.c:42"           (pc at the start of a line)
///   "#2  0x00007ffff7df618a in __libc_start_call_main () from /lib/x86_64-linux-gnu/libc.so.6"
///   "#1  scale (by=2, v=1) at optimized.c:12"       (inlined frames have no address)
/// Without the level (`with_level == false`) it is the stop-report form
/// "factorial (n=5) at structs.c:42" / "0x00007ffff7e9a9c4 in write () from /lib/...libc.so.6".
std::string format_frame_line(session& s, const stack_frame& f, bool with_level);

/// A source line as gdb prints it after a frame line.
struct source_line {
    std::string text;
    /// gdb prints it as an error, on stderr ("91\tFILE: No such file or directory.").
    bool is_error = false;
};

/// The source line of the frame as gdb prints it after a frame line ("82\t    if (n <= 1) {"),
/// nullopt when the frame has no line. A file that cannot be read gives gdb's
/// "91\tFILE: No such file or directory." (an error) the first time, "93\tin FILE" while
/// the lines shown stay in that file.
std::optional<source_line> frame_source_line(session& s, const stack_frame& f);

}  // namespace ompdbg::app
