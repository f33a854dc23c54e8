#pragma once
/// Where every command writes: text (gdb's shapes) or JSON (one object per line). Commands
/// build their result with `result`, `line`, `error`; nothing else in apps/ writes stdout.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ompdbg::app {

/// Parts of the text that a terminal shows in colour, as gdb styles them.
enum class style { function, file, address, frame_level, variable };

class output {
public:
    /// Colour is on when `out` is a terminal, not in JSON mode, and neither NO_COLOR
    /// (https://no-color.org: set and non-empty) nor TERM=dumb says otherwise.
    explicit output(bool json = false, std::FILE* out = stdout, std::FILE* err = stderr);

    bool is_json() const { return json_; }
    bool colour() const { return colour_; }
    void set_colour(bool on) { colour_ = on && !json_; }
    /// `text` in the colour of `st` (gdb's: functions yellow, files green, addresses blue,
    /// variables cyan; frame levels bold) when colour is on, else `text` unchanged.
    std::string styled(style st, std::string_view text) const;
    /// A line of text output (text mode only; in JSON mode it is collected into the
    /// current command's "text" array).
    void line(std::string_view text);
    /// A structured result for JSON mode: member `key` of the current command's "result"
    /// object (docs/json.md). Ignored in text mode.
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
    bool colour_ = false;
    std::vector<nlohmann::json> commands_;   ///< JSON: the commands running, innermost last
};

}  // namespace ompdbg::app
