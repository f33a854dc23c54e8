#include "dap/dap_transport.hpp"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace ompdbg::app::dap {

namespace {

constexpr std::size_t max_header = 64 * 1024;
constexpr std::size_t max_body = 64 * 1024 * 1024;

/// The value of header `name` (case-insensitive) in `header`, or nullopt.
std::optional<std::string> header_value(const std::string& header, std::string_view name) {
    std::size_t pos = 0;
    while (pos < header.size()) {
        std::size_t end = header.find("\r\n", pos);
        if (end == std::string::npos) {
            end = header.size();
        }
        std::string line = header.substr(pos, end - pos);
        pos = end + 2;
        auto colon = line.find(':');
        if (colon == std::string::npos || colon != name.size()) {
            continue;
        }
        bool same = true;
        for (std::size_t i = 0; i < name.size(); ++i) {
            same = same && std::tolower(static_cast<unsigned char>(line[i])) ==
                               std::tolower(static_cast<unsigned char>(name[i]));
        }
        if (same) {
            std::string v = line.substr(colon + 1);
            auto b = v.find_first_not_of(" \t");
            return b == std::string::npos ? std::string() : v.substr(b);
        }
    }
    return std::nullopt;
}

}  // namespace

bool transport::fill(std::size_t n) {
    char chunk[65536];
    while (buffer_.size() < n) {
        if (stopped_) {
            return false;
        }
        pollfd p{in_, POLLIN, 0};
        // A bounded wait, so that stop() is noticed; not a synchronisation sleep.
        int r = ::poll(&p, 1, 200);
        if (r < 0 && errno != EINTR) {
            return false;
        }
        if (r <= 0) {
            if (r == 0 && idle_) {
                idle_();
            }
            continue;
        }
        ssize_t got = ::read(in_, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return false;
        }
        buffer_.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
}

read_result transport::read() {
    // The header ends at the first empty line.
    std::size_t end = std::string::npos;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
        if (buffer_.size() > max_header) {
            buffer_.clear();
            return framing_error{"header longer than 64 KiB without an empty line: dropped"};
        }
        if (!fill(buffer_.size() + 1)) {
            return std::monostate{};
        }
    }
    std::string header = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    auto length_text = header_value(header, "Content-Length");
    if (!length_text) {
        return framing_error{"message header without Content-Length: \"" + header.substr(0, 200) + "\""};
    }
    std::size_t length = 0;
    try {
        std::size_t used = 0;
        unsigned long long v = std::stoull(*length_text, &used);
        if (used != length_text->size() || v > max_body) {
            throw std::out_of_range("length");
        }
        length = static_cast<std::size_t>(v);
    } catch (const std::exception&) {
        return framing_error{"bad Content-Length \"" + *length_text + "\" (a number up to 64 MiB)"};
    }
    if (!fill(length)) {
        return std::monostate{};
    }
    std::string body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    try {
        auto j = nlohmann::json::parse(body);
        if (!j.is_object()) {
            return framing_error{"a message must be a JSON object"};
        }
        return j;
    } catch (const nlohmann::json::exception& e) {
        return framing_error{std::string("malformed JSON: ") + e.what()};
    }
}

void transport::send(nlohmann::json message) {
    std::lock_guard lock(write_lock_);
    message["seq"] = next_seq_++;
    write_frame(message);
}

void transport::forward(const nlohmann::json& message) {
    std::lock_guard lock(write_lock_);
    write_frame(message);
}

void transport::write_frame(const nlohmann::json& message) {
    std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::size_t done = 0;
    while (done < frame.size()) {
        ssize_t n = ::write(out_, frame.data() + done, frame.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;   // the client went away
        }
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace ompdbg::app::dap
