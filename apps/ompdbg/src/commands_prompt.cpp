// Commands of the interactive side: file (choose the program to debug).
#include <fmt/format.h>

#include "commands_inferiors.hpp"
#include "session.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app {

namespace {

std::string trimmed(std::string_view s) {
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

void cmd_file(session& s, std::string_view args) {
    std::string path = trimmed(args);
    auto& from_host = remote_program(s);
    if (path.empty() && !from_host.empty() && !(s.process() && s.process()->is_alive())) {
        from_host.clear();   // gdb discards the program read from the agent's host, silently
        return;
    }
    if (path.empty()) {
        error::send("No executable file now.");
    }
    from_host.clear();
    if (s.process() && s.process()->is_alive()) {
        if (!s.query("A program is being debugged already.\nAre you sure you want to change the file? ")) {
            error::send("File not changed.");
        }
        s.end_target();
    }
    s.set_program(path, s.program_args());
    s.out().field("program", s.program()->string());
}

}  // namespace

void register_prompt_commands(command_table& t) {
    t.add({"file", {}, "Use FILE as program to be debugged.",
           "file FILE\nReads FILE's symbols; `run` then starts it (with the arguments of the last run).",
           cmd_file, false, nullptr});
}

}  // namespace ompdbg::app
