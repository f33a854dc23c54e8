#pragma once
/// The Debug Adapter Protocol's wire format on a pair of file descriptors: messages framed
/// by a `Content-Length: N\r\n\r\n` header, each a JSON object. Reading is done by one
/// thread; writing may come from any thread (one lock, sequence numbers assigned here).

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace ompdbg::app::dap {

/// A message that could not be read as one: the header or the JSON was malformed. The
/// stream goes on after it (the bytes of the bad message are dropped).
struct framing_error {
    std::string message;
};

/// One read: a parsed message, a framing error, or nothing more (end of input / stopped).
using read_result = std::variant<nlohmann::json, framing_error, std::monostate>;

class transport {
public:
    /// Reads from `in`, writes to `out`; both stay open (the caller owns them).
    transport(int in, int out) : in_(in), out_(out) {}
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    /// The next message. Blocks until one arrives, the input ends (monostate) or stop() is
    /// called. A header without Content-Length, a length over 64 MiB or JSON that does not
    /// parse is a framing_error; the reader stays in step with the stream.
    read_result read();
    /// Makes read() return monostate soon (checked between reads of the input).
    void stop() { stopped_ = true; }
    /// Called by read() about every 200 ms while no input comes (the reader's chance to
    /// repeat an interrupt that came too early). Set before the first read.
    void set_idle(std::function<void()> idle) { idle_ = std::move(idle); }

    /// Sends `message` with the next `seq`. Never throws: a client that went away is
    /// ignored (the server ends when its input ends).
    void send(nlohmann::json message);
    /// Sends `message` as it is, its `seq` kept: a request relayed from another stream,
    /// whose responses must name the seq its client gave it.
    void forward(const nlohmann::json& message);

private:
    void write_frame(const nlohmann::json& message);
    /// Fills buffer_ with at least `n` bytes; false at end of input or stop.
    bool fill(std::size_t n);
    int in_;
    int out_;
    std::string buffer_;
    std::atomic<bool> stopped_{false};
    std::function<void()> idle_;
    std::mutex write_lock_;
    std::int64_t next_seq_ = 1;
};

}  // namespace ompdbg::app::dap
