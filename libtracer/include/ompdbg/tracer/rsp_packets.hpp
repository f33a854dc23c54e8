#pragma once
/// gdb's Remote Serial Protocol, the packet layer (LLDB's GDBRemoteCommunication): framing
/// `$payload#cc`, checksums, `+`/`-` acknowledgements until QStartNoAckMode, run-length
/// decoding, binary escaping, and a read timeout on every packet, over a `transport`.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ompdbg/tracer/rsp_transport.hpp"

namespace ompdbg::tracer::rsp {

/// The modulo-256 sum of the payload's bytes.
std::uint8_t checksum(std::string_view payload);
/// `$payload#cc` with `$`, `#`, `}` and `*` escaped (`}` then the byte XOR 0x20).
std::string frame(std::string_view payload);
/// Escapes binary data for X packets (the same bytes as frame escapes).
std::string escape_binary(std::string_view data);
/// Undoes escape_binary (binary replies: qXfer, x).
std::string unescape_binary(std::string_view data);
/// Expands run-length encoding (`c*N`: c repeated N-29 more times); throws on a `*` with
/// nothing before it or a count out of range.
std::string expand_rle(std::string_view data);
/// Hex text of bytes and back; from_hex throws on an odd length or a non-hex digit.
std::string to_hex(std::string_view bytes);
std::string from_hex(std::string_view hex);

class packet_io {
public:
    /// `timeout_ms`: how long any one packet may take to arrive (gdb's `set remotetimeout`).
    packet_io(std::unique_ptr<transport> link, int timeout_ms);

    /// Sends one packet; while acknowledgements are on, waits for `+` (resends on `-`,
    /// three times at most).
    void send(std::string_view payload);
    /// The next packet's payload, run-length expanded (binary escapes left in place).
    /// Throws "Remote connection closed: WHY" at end of stream, "Remote agent ... did not
    /// answer within N s." after the timeout (`timeout_ms` < 0: the default one), and a
    /// one-line error for a packet that is malformed or fails its checksum twice.
    std::string receive(int timeout_ms = -2);
    /// Like receive, but returns nullopt when nothing at all arrived within `timeout_ms`
    /// (for waiting on a running target in slices).
    std::optional<std::string> try_receive(int timeout_ms);
    /// The next non-stop notification (`%Stop:...`), kept from earlier reads or arriving
    /// within `timeout_ms`; nullopt when none came. A reply arriving meanwhile belongs to
    /// no request and is dropped.
    std::optional<std::string> try_notification(int timeout_ms);
    /// send then receive.
    std::string exchange(std::string_view payload);
    /// The replies to `payloads`, in order. Without acknowledgements the requests are
    /// pipelined (a window of them sent before the first reply is read: one round trip per
    /// window instead of one per request, as the agent answers in order); else one by one.
    std::vector<std::string> exchange_all(const std::vector<std::string>& payloads);

    /// After QStartNoAckMode was accepted: no more `+`/`-`.
    void set_no_ack(bool on) { no_ack_ = on; }
    /// Async-signal-safe: the interrupt byte (0x03).
    void send_interrupt() noexcept { link_->write_byte_async('\x03'); }
    transport& link() { return *link_; }
    int timeout_ms() const { return timeout_ms_; }

    /// After the stream closed: the error it ended with ("Remote connection closed ..."),
    /// else empty.
    const std::string& closed_reason() const { return closed_reason_; }

    /// Bytes and packets moved so far (for benchmarks and logs).
    std::uint64_t packets_sent() const { return sent_; }
    std::uint64_t bytes_received() const { return received_bytes_; }

private:
    /// Reads more bytes into buf_; false on timeout; throws at end of stream.
    bool fill(int timeout_ms);
    std::optional<std::string> read_packet(int timeout_ms, bool want_notification);
    [[noreturn]] void closed();

    std::unique_ptr<transport> link_;
    int timeout_ms_;
    bool no_ack_ = false;
    std::string buf_;
    std::string closed_reason_;
    std::deque<std::string> notifications_;   ///< arrived while a reply was awaited
    std::uint64_t sent_ = 0;
    std::uint64_t received_bytes_ = 0;
};

}  // namespace ompdbg::tracer::rsp
