#include "dap/dap_relay.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dap/dap_protocol.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

namespace {

/// A connected socket to the parent at `path`; throws with what a user can act on.
owned_fd connect_parent(const std::string& path, const std::string& rank) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        error::send("\"ompdbgParent\" must be the path of the socket of the job's ompdbg dap session");
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    owned_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0 || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        error::send("cannot reach the debug session of " + rank + " at " + path + ": " + std::strerror(errno) +
                    " (the ompdbg dap session that holds the MPI job has ended, or this configuration is not one it gave)");
    }
    return fd;
}

std::string rank_name(const nlohmann::json& arguments) {
    auto it = arguments.find("rank");
    return it != arguments.end() && it->is_number_integer() ? "rank " + std::to_string(it->get<long long>()) : "the rank";
}

}  // namespace

bool is_rank_attach(const nlohmann::json& request) {
    if (request.value("command", std::string()) != "attach") {
        return false;
    }
    auto args = request.find("arguments");
    return args != request.end() && args->is_object() && args->contains("ompdbgParent");
}

relay::relay(transport& client, request_queue& queue, const nlohmann::json& initialize, const nlohmann::json& attach)
    : client_(client),
      queue_(queue),
      path_(attach["arguments"]["ompdbgParent"].is_string() ? attach["arguments"]["ompdbgParent"].get<std::string>() : ""),
      socket_(connect_parent(path_, rank_name(attach["arguments"]))),
      parent_(socket_.get(), socket_.get()) {
    initialize_seq_ = initialize.value("seq", std::int64_t{0});
    parent_.forward(initialize);
    parent_.forward(attach);
    pump_ = std::thread([this] { pump(); });
}

relay::~relay() {
    parent_.stop();
    ::shutdown(socket_.get(), SHUT_RDWR);
    if (pump_.joinable()) {
        pump_.join();
    }
}

// The parent's messages to the client, renumbered in this stream (the client saw this
// server's seq for `initialize`); the response to the relayed `initialize` is dropped.
void relay::pump() {
    for (;;) {
        read_result m = parent_.read();
        if (std::holds_alternative<std::monostate>(m)) {
            break;
        }
        auto* msg = std::get_if<nlohmann::json>(&m);
        if (msg == nullptr) {
            continue;
        }
        std::string type = msg->value("type", std::string());
        if (type == "response" && msg->value("command", std::string()) == "initialize" &&
            msg->value("request_seq", std::int64_t{-1}) == initialize_seq_) {
            continue;
        }
        if (type == "event" && msg->value("event", std::string()) == "terminated") {
            terminated_seen_ = true;
        }
        bool disconnected = type == "response" && msg->value("command", std::string()) == "disconnect";
        client_.send(std::move(*msg));
        if (disconnected) {
            queue_.push({std::nullopt, nullptr});   // answered: this server ends
            return;
        }
    }
    parent_gone_ = true;
    // The parent ended (its job ended, it was disconnected, it died): this session ends.
    if (!terminated_seen_) {
        terminated_seen_ = true;
        client_.send(make_event("terminated"));
    }
}

// After `terminated` the session is over whatever ended it (the job, the parent, its own
// terminate): the requests that follow are answered here, so that none waits on a parent
// that may be gone.
void relay::forward(const nlohmann::json& msg) {
    if (!parent_gone_ && !terminated_seen_) {
        parent_.forward(msg);
        return;
    }
    request r(client_, msg);
    if (r.command() == "disconnect") {
        r.respond();
        queue_.push({std::nullopt, nullptr});
        return;
    }
    r.fail("the debug session of the MPI job has ended (" + path_ + ")");
}

}  // namespace ompdbg::app::dap
