#pragma once
/// `ompdbg dap`: a Debug Adapter Protocol server on stdin/stdout. A reader thread takes
/// the client's messages (answering `pause` at once, by interrupting the running target as
/// Ctrl-C does); the main thread handles the others in order. With a client that starts
/// child sessions, an MPI job's ranks get one session each (dap_ranks.hpp), whose streams
/// are read by threads of their own into the same queue; a server started for such a
/// session relays to the one that holds the job (dap_relay.hpp).

#include <string>
#include <vector>

namespace ompdbg::app::dap {

/// Serves one client until `disconnect` or the end of input; the exit status.
int run_dap(const std::vector<std::string>& args);

}  // namespace ompdbg::app::dap
