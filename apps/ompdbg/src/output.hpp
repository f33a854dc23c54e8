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
    /// Text without a line end (gdb's `echo` and `output` leave the line open).
    void partial(std::string_view text);
    /// Members added to every JSON event until replaced (null or empty: none), e.g.
    /// `{"rank": 2}` while an MPI rank's stop or step is reported (docs/json.md). Text mode
    /// ignores them.
    void set_event_fields(nlohmann::json fields) { event_fields_ = std::move(fields); }
    /// A structured result for JSON mode: member `key` of the current command's "result"
    /// object (docs/json.md). Ignored in text mode.
    void field(const std::string& key, nlohmann::json value);
    /// An asynchronous event (stop, new thread, exit); text form printed as given.
    void event(const std::string& kind, nlohmann::json fields, std::string_view text);
    /// An error message: text mode prints it to stderr as one line.
    void error(std::string_view message);

    /// A line printed once before whatever is printed next (line, event or error), then
    /// dropped: the "[rank N]" label of output that ranks stepping together produce in
    /// turns. Empty: none.
    void set_header(std::string text) { header_ = std::move(text); }
    /// Whether the header set last has not been printed yet.
    bool header_pending() const { return !header_.empty(); }

    /// Begin/end of one command (JSON mode emits one object per command at end).
    void begin_command(std::string_view command_line);
    void end_command(bool ok);
    void flush();

private:
    nlohmann::json event_fields_;
    bool json_;
    std::FILE* out_;
    std::FILE* err_;
    bool colour_ = false;
    std::string header_;
    void print_header();
    std::vector<nlohmann::json> commands_;   ///< JSON: the commands running, innermost last
};

}  // namespace ompdbg::app
