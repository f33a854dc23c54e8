#include "output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ompdbg::app {

namespace {

// One line per JSON object, whatever bytes a target string holds (invalid UTF-8 is
// replaced, never an exception halfway through a line).
std::string dump_line(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

output::output(bool json, std::FILE* out, std::FILE* err) : json_(json), out_(out), err_(err) {
    const char* no_colour = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    colour_ = !json_ && out_ != nullptr && ::isatty(::fileno(out_)) != 0 &&
              (no_colour == nullptr || *no_colour == '\0') && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

std::string output::styled(style st, std::string_view text) const {
    if (!colour_ || text.empty()) {
        return std::string(text);
    }
    const char* code = "";
    switch (st) {
    case style::function: code = "\x1b[33m"; break;
    case style::file: code = "\x1b[32m"; break;
    case style::address: code = "\x1b[34m"; break;
    case style::variable: code = "\x1b[36m"; break;
    case style::frame_level: code = "\x1b[1m"; break;
    }
    return std::string(code) + std::string(text) + "\x1b[m";
}

void output::print_header() {
    if (!header_.empty()) {
        std::string h = std::move(header_);
        header_.clear();
        line(h);
    }
}

void output::line(std::string_view text) {
    print_header();
    if (json_) {
        if (!commands_.empty()) {
            commands_.back()["text"].push_back(std::string(text));
        } else {
            nlohmann::json j{{"type", "text"}, {"text", std::string(text)}};
            std::fprintf(out_, "%s\n", dump_line(j).c_str());
        }
        return;
    }
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fputc('\n', out_);
}

void output::partial(std::string_view text) {
    if (json_) {
        line(text);   // JSON keeps each piece as one entry of the command's "text" array
        return;
    }
    print_header();
    std::fwrite(text.data(), 1, text.size(), out_);
}

void output::field(const std::string& key, nlohmann::json value) {
    if (!json_) {
        return;
    }
    if (!commands_.empty()) {
        commands_.back()["result"][key] = std::move(value);
    }
}

void output::event(const std::string& kind, nlohmann::json fields, std::string_view text) {
    print_header();
    if (json_) {
        nlohmann::json j{{"type", "event"}, {"event", kind}};
        if (event_fields_.is_object()) {
            for (auto& [k, v] : event_fields_.items()) {
                j[k] = v;
            }
        }
        if (fields.is_object()) {
            for (auto& [k, v] : fields.items()) {
                j[k] = v;
            }
        }
        if (!text.empty()) {
            j["text"] = std::string(text);
        }
        std::fprintf(out_, "%s\n", dump_line(j).c_str());
        std::fflush(out_);
        return;
    }
    if (!text.empty()) {
        std::fwrite(text.data(), 1, text.size(), out_);
        if (text.back() != '\n') {
            std::fputc('\n', out_);
        }
        std::fflush(out_);
    }
}

void output::error(std::string_view message) {
    print_header();
    if (json_) {
        if (!commands_.empty()) {
            commands_.back()["error"] = std::string(message);
        } else {
            nlohmann::json j{{"type", "error"}, {"message", std::string(message)}};
            std::fprintf(out_, "%s\n", dump_line(j).c_str());
        }
        return;
    }
    std::fflush(out_);
    std::fwrite(message.data(), 1, message.size(), err_);
    std::fputc('\n', err_);
    std::fflush(err_);
}

void output::begin_command(std::string_view command_line) {
    if (!json_) {
        return;
    }
    // A command run from inside another (a breakpoint's `commands` during `continue`)
    // gets its own object, printed before the outer command's.
    commands_.push_back(nlohmann::json{{"type", "command"},
                                       {"command", std::string(command_line)},
                                       {"text", nlohmann::json::array()},
                                       {"result", nlohmann::json::object()}});
}

void output::end_command(bool ok) {
    if (!json_ || commands_.empty()) {
        return;
    }
    nlohmann::json done = std::move(commands_.back());
    commands_.pop_back();
    done["ok"] = ok;
    std::fprintf(out_, "%s\n", dump_line(done).c_str());
    std::fflush(out_);
}

void output::flush() {
    std::fflush(out_);
    std::fflush(err_);
}

}  // namespace ompdbg::app
