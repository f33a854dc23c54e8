#include "cli_observer.hpp"

#include <string>

#include <fmt/format.h>

namespace ompdbg::app {

void cli_observer::symbols_read(const std::filesystem::path& program, bool has_debug_info) {
    if (!batch_) {
        out_.line(fmt::format("Reading symbols from {}...", program.string()));
    }
    if (!has_debug_info) {
        out_.line(fmt::format("(No debugging symbols found in {})", program.string()));
    }
}

void cli_observer::warning(std::string_view text) {
    out_.line(fmt::format("warning: {}", text));
}

void cli_observer::expression_warning(std::string_view text) {
    out_.error("warning: " + std::string(text));
}

void cli_observer::remote_file_fetch(const std::string& host, const std::filesystem::path& host_path) {
    // gdb's words, before the transfer. An event, not a line of the command's text: the DAP
    // server shows each as an `output` event (console), --json as a "remote-file" object.
    out_.event("remote-file", {{"path", host_path.string()}, {"host", host}},
               fmt::format("Reading {} from remote target...", host_path.string()));
}

void cli_observer::agent_unused(std::string_view why) {
    out_.line(fmt::format("Fast breakpoints: {}; conditions are evaluated by the debugger at each stop.", why));
}

void cli_observer::agent_loaded(const std::filesystem::path& agent, pid_t pid) {
    out_.line(fmt::format("Fast breakpoints: loaded the agent {} into process {}.", agent.string(), pid));
}

void cli_observer::target_lines(std::string_view text) {
    out_.flush();   // what is buffered goes first, on its own
    out_.partial(text);
    out_.flush();
}

}  // namespace ompdbg::app
