#include "output.hpp"

namespace ompdbg::app {

void output::line(std::string_view text) {
    if (json_) {
        if (in_command_) {
            current_["text"].push_back(std::string(text));
        } else {
            nlohmann::json j{{"type", "text"}, {"text", std::string(text)}};
            std::fprintf(out_, "%s\n", j.dump().c_str());
        }
        return;
    }
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fputc('\n', out_);
}

void output::field(const std::string& key, nlohmann::json value) {
    if (!json_) {
        return;
    }
    if (in_command_) {
        current_[key] = std::move(value);
    }
}

void output::event(const std::string& kind, nlohmann::json fields, std::string_view text) {
    if (json_) {
        nlohmann::json j{{"type", "event"}, {"event", kind}};
        if (fields.is_object()) {
            for (auto& [k, v] : fields.items()) {
                j[k] = v;
            }
        }
        if (!text.empty()) {
            j["text"] = std::string(text);
        }
        std::fprintf(out_, "%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
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
    if (json_) {
        if (in_command_) {
            current_["error"] = std::string(message);
        } else {
            nlohmann::json j{{"type", "error"}, {"message", std::string(message)}};
            std::fprintf(out_, "%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
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
    current_ = nlohmann::json{{"type", "command"}, {"command", std::string(command_line)}};
    in_command_ = true;
}

void output::end_command(bool ok) {
    if (!json_ || !in_command_) {
        return;
    }
    current_["ok"] = ok;
    std::fprintf(out_, "%s\n", current_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::fflush(out_);
    current_ = nlohmann::json();
    in_command_ = false;
}

void output::flush() {
    std::fflush(out_);
    std::fflush(err_);
}

}  // namespace ompdbg::app
