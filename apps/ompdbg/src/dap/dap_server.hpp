#pragma once
/// `ompdbg dap`: a Debug Adapter Protocol server on stdin/stdout. A reader thread takes
/// the client's messages (answering `pause` at once, by interrupting the running target as
/// Ctrl-C does); the main thread handles the others in order.

#include <string>
#include <vector>

namespace ompdbg::app::dap {

/// Serves one client until `disconnect` or the end of input; the exit status.
int run_dap(const std::vector<std::string>& args);

}  // namespace ompdbg::app::dap
