#pragma once
/// The byte stream under gdb's Remote Serial Protocol: a remote shell's stdin/stdout
/// (`| CMD`, the command runs `gdbserver --multi -` on its host) or a TCP socket
/// (`HOST:PORT`). An interface, so that tests put a scripted transport under the packet
/// layer (malformed or truncated packets, an agent that stops answering).

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ompdbg::tracer::rsp {

class transport {
public:
    virtual ~transport() = default;
    /// Writes every byte; throws when the other end is gone.
    virtual void write(std::string_view bytes) = 0;
    /// Waits at most `timeout_ms` (< 0: no limit) for bytes and returns what arrived;
    /// an empty string on timeout; nullopt when the other end closed the stream.
    virtual std::optional<std::string> read(int timeout_ms) = 0;
    /// Async-signal-safe: sends one byte (the interrupt, 0x03) from a signal handler.
    virtual void write_byte_async(char c) noexcept = 0;
    /// How the user named it, as gdb shows a connection: "| CMD" or "HOST:PORT".
    virtual std::string describe() const = 0;
    /// After the stream closed: why, in one line (the remote shell's last message on its
    /// stderr and its exit status); empty when nothing is known.
    virtual std::string end_reason() { return {}; }
};

/// Runs `command` with /bin/sh -c in its own process group, its stdin/stdout the stream
/// and its stderr kept for end_reason(). The destructor closes the stream, gives the
/// command 2 s to end and then SIGKILLs its process group. Throws when it cannot start.
std::unique_ptr<transport> spawn_command(const std::string& command);

/// Connects to HOST:PORT (":PORT" is localhost); throws "HOST:PORT: Connection refused.".
std::unique_ptr<transport> connect_tcp(const std::string& host_port);

}  // namespace ompdbg::tracer::rsp
