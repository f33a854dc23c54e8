#pragma once
/// One child debug session per MPI rank, through DAP's `startDebugging` reverse request.
/// The server that holds the job (the parent) listens on a Unix socket private to the user
/// (0600, in a 0700 directory); for each rank it asks its client to start a session whose
/// configuration names that socket and the rank. The client starts a new `ompdbg dap`,
/// which relays its stream here (dap_relay.hpp). Each connection is scoped to its rank: its
/// requests are handled by the main thread like the client's, its rank's events go to it.

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dap/dap_transport.hpp"

namespace ompdbg::app::dap {

/// A file descriptor closed on destruction.
class owned_fd {
public:
    owned_fd() = default;
    explicit owned_fd(int fd) : fd_(fd) {}
    owned_fd(owned_fd&& o) noexcept : fd_(o.release()) {}
    owned_fd& operator=(owned_fd&& o) noexcept;
    owned_fd(const owned_fd&) = delete;
    owned_fd& operator=(const owned_fd&) = delete;
    ~owned_fd();
    int get() const { return fd_; }
    int release() {
        int fd = fd_;
        fd_ = -1;
        return fd;
    }

private:
    int fd_ = -1;
};

/// One rank session's stream (the relay of a child `ompdbg dap`).
class rank_connection {
public:
    explicit rank_connection(owned_fd fd) : fd_(std::move(fd)), client_(fd_.get(), fd_.get()) {}
    rank_connection(const rank_connection&) = delete;
    rank_connection& operator=(const rank_connection&) = delete;
    transport& client() { return client_; }
    /// The rank its `attach` named; -1 before.
    int rank() const { return rank_; }

private:
    friend class rank_sessions;
    owned_fd fd_;
    transport client_;
    std::atomic<int> rank_{-1};
    bool configured_ = false;        ///< after its configurationDone (guarded by the sessions' lock)
    bool terminated_sent_ = false;   ///< guarded by the sessions' lock
    std::thread reader_;
};

class rank_sessions {
public:
    /// `primary`: the client that started the server (it gets the startDebugging requests).
    explicit rank_sessions(transport& primary) : primary_(primary) {}
    rank_sessions(const rank_sessions&) = delete;
    rank_sessions& operator=(const rank_sessions&) = delete;
    ~rank_sessions() { close(); }
    /// Sends `terminated` to every rank session, closes them (their readers joined), removes
    /// the socket. Before the adapter the readers use goes away.
    void close();

    /// Whether the client announced supportsStartDebuggingRequest; `type` is its launch or
    /// attach configuration's `type`, copied into the children's configurations.
    void set_client_supports(bool on) { supported_ = on; }
    bool supported() const { return supported_; }
    void set_configuration_type(std::string type) { type_ = std::move(type); }
    /// The reader of each accepted connection (set before announce()).
    void set_serve(std::function<void(std::shared_ptr<rank_connection>)> serve) { serve_ = std::move(serve); }
    /// Whether rank sessions were asked for (their events must be routed).
    bool active() const { return listening_; }

    /// The job's ranks are acquired (rank → its process id): listens and sends one
    /// startDebugging request per rank. Once; false (and a message) when the socket could
    /// not be made.
    bool announce(const std::map<int, pid_t>& ranks, std::string& message);

    // ---- called by a connection's reader thread ----
    /// `attach` of a rank session: binds the connection to `rank`; false (and why) for a
    /// rank that is not in the job.
    bool bind(rank_connection& c, const nlohmann::json& arguments, std::string& why);
    /// `configurationDone`: the session is marked configured, then `respond` answers it,
    /// then a job stopped now is reported to it.
    void configured(rank_connection& c, const std::function<void()>& respond);
    /// `disconnect` or the end of the stream: the session gets no more events.
    void closed(rank_connection& c);
    /// `terminate` of a rank session: it ends (`terminated`), the job goes on.
    void terminate(rank_connection& c);

    // ---- called by the main thread, for the events of the job ----
    /// A stop: the rank that stopped gets `body`; the other ranks' sessions a stop of their
    /// own main thread (`pause`, the job stops as a whole), so that each shows its stacks.
    void stopped(int rank, const nlohmann::json& body);
    /// The job resumed on a request of `by` (nullptr: the primary client): `continued` to
    /// every other session.
    void resumed(const rank_connection* by, pid_t tid);
    void send_to_rank(int rank, const nlohmann::json& event);
    void send_to_all(const nlohmann::json& event);

private:
    void accept_loop();
    nlohmann::json stop_for(int rank) const;
    void send_stop(rank_connection& c);
    transport& primary_;
    bool supported_ = false;
    std::string type_;
    std::function<void(std::shared_ptr<rank_connection>)> serve_;
    std::atomic<bool> listening_{false};
    std::atomic<bool> stopping_{false};
    std::string directory_;
    std::string socket_path_;
    owned_fd listener_;
    std::thread acceptor_;
    mutable std::mutex lock_;
    std::map<int, pid_t> ranks_;
    std::vector<std::shared_ptr<rank_connection>> connections_;
    /// The job's last stop while it stays stopped: the rank (-1: none known) and the body.
    std::optional<std::pair<int, nlohmann::json>> last_stop_;
};

}  // namespace ompdbg::app::dap
