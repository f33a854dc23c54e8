// The warnings gdb prints while it evaluates an expression and goes on (frame_context::warn).

#include "ompdbg/debugger/eval/frame_context.hpp"

#include "ompdbg/debugger/session/session.hpp"

namespace ompdbg::debugger {

void frame_context::warn(std::string_view text) { s_.observer().expression_warning(text); }

}  // namespace ompdbg::debugger
