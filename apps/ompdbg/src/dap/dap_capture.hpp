#pragma once
/// Where output goes under the DAP server. The protocol owns ompdbg's original stdin and
/// stdout; the session writes its JSON objects (docs/json.md) into a memory stream read
/// back after each command; the debugged program's stdout/stderr (and anything else
/// written to descriptors 1 and 2) reach the client as `output` events.

#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ompdbg::app::dap {

/// A FILE* whose bytes are kept in memory, split into lines, each parsed as JSON.
class session_stream {
public:
    session_stream();
    ~session_stream();
    session_stream(const session_stream&) = delete;
    session_stream& operator=(const session_stream&) = delete;

    std::FILE* file() { return file_; }
    /// The complete lines written since the last call, as JSON (a line that is no JSON
    /// becomes {"type": "text", "text": LINE}).
    std::vector<nlohmann::json> take();
    /// Calls `seen` (on the writing thread, outside the stream's lock) when text written
    /// contains `needle`: the server learns of an event while the command that causes it
    /// still runs (an MPI job's ranks acquired during `run`).
    void watch(std::string needle, std::function<void()> seen);

private:
    static ssize_t write_cookie(void* self, const char* data, std::size_t size);
    std::FILE* file_ = nullptr;
    std::mutex lock_;
    std::string pending_;
    std::string needle_;
    std::function<void()> seen_;
};

/// The standard descriptors moved out of the protocol's way: construction duplicates the
/// original 0 and 1 for the protocol, points 0 at /dev/null and 1, 2 at a pipe that a
/// thread forwards to `sink` (text as read). Destruction restores nothing (the process is
/// ending) but stops and joins the thread.
class stdio_redirect {
public:
    explicit stdio_redirect(std::function<void(std::string)> sink);
    ~stdio_redirect();
    stdio_redirect(const stdio_redirect&) = delete;
    stdio_redirect& operator=(const stdio_redirect&) = delete;

    int protocol_in() const { return proto_in_; }
    int protocol_out() const { return proto_out_; }

private:
    void forward();
    int proto_in_ = -1;
    int proto_out_ = -1;
    int pipe_read_ = -1;
    std::function<void(std::string)> sink_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace ompdbg::app::dap
