// The warnings gdb prints while it evaluates an expression and goes on (frame_context::warn).

#include "frame_context.hpp"

#include <string>

#include "output.hpp"
#include "session.hpp"

namespace ompdbg::app {

void frame_context::warn(std::string_view text) { s_.out().error("warning: " + std::string(text)); }

}  // namespace ompdbg::app
