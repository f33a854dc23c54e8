#pragma once
/// Where every command writes: text (gdb's shapes) or JSON (one object per line). Commands
/// build their result with `result`, `line`, `error`; nothing else in apps/ writes stdout.

#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ompdbg::app {

class output {
public:
    explicit output(bool json = false, std::FILE* out = stdout, std::FILE* err = stderr)
        : json_(json), out_(out), err_(err) {}

    bool is_json() const { return json_; }
    /// A line of text output (text mode only; in JSON mode it is collected into the
    /// current command's "text" array).
    void line(std::string_view text);
    /// A structured result for JSON mode (merged into the current command's object).
    void field(const std::string& key, nlohmann::json value);
    /// An asynchronous event (stop, new thread, exit); text form printed as given.
    void event(const std::string& kind, nlohmann::json fields, std::string_view text);
    /// An error message: text mode prints it to stderr as one line.
    void error(std::string_view message);

    /// Begin/end of one command (JSON mode emits one object per command at end).
    void begin_command(std::string_view command_line);
    void end_command(bool ok);
    void flush();

private:
    bool json_;
    std::FILE* out_;
    std::FILE* err_;
    nlohmann::json current_;
    bool in_command_ = false;
};

}  // namespace ompdbg::app
