// The packet layer of gdb's Remote Serial Protocol: what gdb's remote.c does in
// putpkt/getpkt and LLDB in GDBRemoteCommunication. Every read has a deadline, and
// whatever arrives (garbage, a packet cut short, a checksum that does not add up) ends in
// a one-line error, never a crash or a wait without end.
#include "ompdbg/tracer/rsp_packets.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::tracer::rsp {

namespace {

constexpr std::size_t max_packet = 16u << 20;   // no agent sends more in one packet

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

bool needs_escape(char c) { return c == '$' || c == '#' || c == '}' || c == '*'; }

std::string shorten(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 60)) {
        out += (c >= 0x20 && c < 0x7f) ? c : '.';
    }
    return s.size() > 60 ? out + "..." : out;
}

}  // namespace

std::uint8_t checksum(std::string_view payload) {
    unsigned sum = 0;
    for (unsigned char c : payload) {
        sum += c;
    }
    return static_cast<std::uint8_t>(sum & 0xff);
}

std::string escape_binary(std::string_view data) {
    std::string out;
    out.reserve(data.size());
    for (char c : data) {
        if (needs_escape(c)) {
            out += '}';
            out += static_cast<char>(c ^ 0x20);
        } else {
            out += c;
        }
    }
    return out;
}

std::string frame(std::string_view payload) {
    std::string body = escape_binary(payload);
    return fmt::format("${}#{:02x}", body, checksum(body));
}

std::string unescape_binary(std::string_view data) {
    std::string out;
    out.reserve(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (data[i] == '}' && i + 1 < data.size()) {
            out += static_cast<char>(data[++i] ^ 0x20);
        } else {
            out += data[i];
        }
    }
    return out;
}

std::string expand_rle(std::string_view data) {
    std::string out;
    out.reserve(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (data[i] != '*') {
            out += data[i];
            continue;
        }
        if (out.empty() || i + 1 >= data.size()) {
            error::send("Remote agent sent a malformed packet: a run-length count with nothing to repeat.");
        }
        int n = static_cast<unsigned char>(data[++i]) - 29;
        if (n < 3 || n > 97) {
            error::send("Remote agent sent a malformed packet: a run-length count out of range.");
        }
        out.append(static_cast<std::size_t>(n), out.back());
    }
    return out;
}

std::string to_hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0) {
        error::send(fmt::format("Remote agent sent malformed hex data: odd length {}.", hex.size()));
    }
    std::string out;
    out.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0) {
            error::send(fmt::format("Remote agent sent malformed hex data: \"{}\".", shorten(hex)));
        }
        out += static_cast<char>(hi * 16 + lo);
    }
    return out;
}

packet_io::packet_io(std::unique_ptr<transport> link, int timeout_ms) : link_(std::move(link)), timeout_ms_(timeout_ms) {}

void packet_io::closed() {
    std::string why = link_->end_reason();
    closed_reason_ = why.empty() ? fmt::format("Remote connection closed ({}).", link_->describe())
                                 : fmt::format("Remote connection closed ({}): {}", link_->describe(), why);
    error::send(closed_reason_);
}

bool packet_io::fill(int timeout_ms) {
    auto got = link_->read(timeout_ms);
    if (!got) {
        closed();
    }
    if (got->empty()) {
        return false;
    }
    received_bytes_ += got->size();
    buf_ += *got;
    return true;
}

void packet_io::send(std::string_view payload) {
    std::string framed = frame(payload);
    log::write(log::channel::ptrace, "-> {}", shorten(payload));
    ++sent_;
    for (int attempt = 0;; ++attempt) {
        try {
            link_->write(framed);
        } catch (const error&) {
            // A remote shell that already ended (ssh refused, gdbserver missing) breaks the
            // pipe before its reason can be read: say that reason, as a read would.
            if (!link_->end_reason().empty()) {
                closed();
            }
            throw;
        }
        if (no_ack_) {
            return;
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
        for (;;) {
            auto pos = buf_.find_first_of("+-");
            auto dollar = buf_.find('$');
            if (pos != std::string::npos && (dollar == std::string::npos || pos < dollar)) {
                char c = buf_[pos];
                buf_.erase(0, pos + 1);
                if (c == '+') {
                    return;
                }
                break;   // '-': send again
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !fill(static_cast<int>(left.count()))) {
                error::send(fmt::format("Remote agent ({}) did not acknowledge a packet within {:g} s.", link_->describe(),
                                        timeout_ms_ / 1000.0));
            }
        }
        if (attempt == 2) {
            error::send(fmt::format("Remote agent ({}) rejected a packet three times.", link_->describe()));
        }
    }
}

std::optional<std::string> packet_io::try_receive(int timeout_ms) {
    return read_packet(timeout_ms, false);
}

std::optional<std::string> packet_io::try_notification(int timeout_ms) {
    if (!notifications_.empty()) {
        std::string n = std::move(notifications_.front());
        notifications_.pop_front();
        return n;
    }
    return read_packet(timeout_ms, true);
}

// Packets are `$...#cc` (replies, acked until no-ack mode) or `%...#cc` (non-stop
// notifications, never acked). A notification may arrive before the reply to any packet
// (gdbserver sends it as soon as a thread stops): it is kept for try_notification.
std::optional<std::string> packet_io::read_packet(int timeout_ms, bool want_notification) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool started = false;
    int bad_checksums = 0;
    // A packet that has begun gets the whole packet timeout to end, even when the caller
    // waits in short slices.
    auto packet_deadline = deadline;
    for (;;) {
        // Acks and noise before a packet are dropped (gdb does the same).
        auto start = buf_.find_first_of("$%");
        if (start == std::string::npos) {
            buf_.clear();
        } else {
            buf_.erase(0, start);
            if (!started) {
                started = true;
                packet_deadline = std::max(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_));
            }
            auto hash = buf_.find('#');
            if (hash != std::string::npos && buf_.size() >= hash + 3) {
                bool is_notification = buf_[0] == '%';
                std::string body = buf_.substr(1, hash - 1);
                int hi = hex_digit(buf_[hash + 1]), lo = hex_digit(buf_[hash + 2]);
                buf_.erase(0, hash + 3);
                started = false;
                if (body.find('$') != std::string::npos) {
                    error::send(fmt::format("Remote agent sent a malformed packet: \"{}\".", shorten(body)));
                }
                bool good = hi >= 0 && lo >= 0 && checksum(body) == hi * 16 + lo;
                if (is_notification) {
                    if (!good) {
                        error::send(fmt::format("Remote agent sent a notification with a bad checksum: \"{}\".",
                                                shorten(body)));
                    }
                    log::write(log::channel::ptrace, "<% {}", shorten(body));
                    if (want_notification) {
                        return expand_rle(body);
                    }
                    notifications_.push_back(expand_rle(body));
                    continue;
                }
                if (!good) {
                    if (no_ack_ || ++bad_checksums > 2) {
                        error::send(fmt::format("Remote agent sent a packet with a bad checksum: \"{}\".", shorten(body)));
                    }
                    link_->write("-");
                    continue;
                }
                if (!no_ack_) {
                    link_->write("+");
                }
                log::write(log::channel::ptrace, "<- {}", shorten(body));
                if (want_notification) {
                    // A reply nobody waits for (its request timed out): out of step, dropped.
                    log::write(log::channel::ptrace, "dropped a reply while waiting for a notification");
                    continue;
                }
                return expand_rle(body);
            }
            if (buf_.size() > max_packet) {
                error::send("Remote agent sent a packet larger than 16 MiB without its end.");
            }
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>((started ? packet_deadline : deadline) -
                                                                          std::chrono::steady_clock::now());
        // Past the deadline, what has arrived is still read (a zero timeout polls once):
        // a caller polling several agents waits with 0 and must see their replies.
        bool expired = left.count() <= 0;
        if ((expired && started) || !fill(expired ? 0 : static_cast<int>(left.count()))) {
            if (started) {
                // The stream is out of step: what came is dropped with the error.
                std::string partial = shorten(buf_);
                buf_.clear();
                error::send(fmt::format("Remote agent ({}) sent a truncated packet: \"{}\".", link_->describe(), partial));
            }
            return std::nullopt;
        }
    }
}

std::string packet_io::receive(int timeout_ms) {
    int t = timeout_ms < 0 ? timeout_ms_ : timeout_ms;
    if (auto p = try_receive(t)) {
        return *p;
    }
    error::send(fmt::format("Remote agent ({}) did not answer within {:g} s.", link_->describe(), t / 1000.0));
}

std::string packet_io::exchange(std::string_view payload) {
    send(payload);
    return receive();
}

std::vector<std::string> packet_io::exchange_all(const std::vector<std::string>& payloads) {
    // A window small enough that neither side's pipe fills while the other is not reading
    // (64 short requests, and 64 replies of a small read).
    constexpr std::size_t window = 64;
    std::vector<std::string> replies;
    replies.reserve(payloads.size());
    for (std::size_t i = 0; i < payloads.size();) {
        std::size_t n = no_ack_ ? std::min(window, payloads.size() - i) : 1;
        for (std::size_t k = 0; k < n; ++k) {
            send(payloads[i + k]);
        }
        for (std::size_t k = 0; k < n; ++k) {
            replies.push_back(receive());
        }
        i += n;
    }
    return replies;
}

}  // namespace ompdbg::tracer::rsp
