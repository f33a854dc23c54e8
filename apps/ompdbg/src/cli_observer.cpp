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

}  // namespace ompdbg::app
