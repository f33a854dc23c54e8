#pragma once
/// The child side of a rank session (dap_ranks.hpp): the client started this `ompdbg dap`
/// for one rank of a job that another `ompdbg dap` (the parent) holds under ptrace. Its
/// `attach` configuration names the parent's socket; from then on this server relays: the
/// client's requests go to the parent as they are (their seq kept), the parent's responses
/// and events come back to the client.

#include <atomic>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "dap/dap_queue.hpp"
#include "dap/dap_ranks.hpp"
#include "dap/dap_transport.hpp"

namespace ompdbg::app::dap {

/// Whether `request` is an `attach` that names a parent session (`ompdbgParent`).
bool is_rank_attach(const nlohmann::json& request);

class relay {
public:
    /// Connects to the parent named by `attach` and sends it the client's `initialize`
    /// (whose response this server gave already) and the `attach`. Throws an error with a
    /// message for the client when the parent cannot be reached.
    relay(transport& client, request_queue& queue, const nlohmann::json& initialize, const nlohmann::json& attach);
    relay(const relay&) = delete;
    relay& operator=(const relay&) = delete;
    ~relay();
    /// A request of the client: to the parent, or, once the session ended (`terminated`) or
    /// the parent is gone, answered here (`disconnect` ends this server, the others fail).
    void forward(const nlohmann::json& request);

private:
    void pump();
    transport& client_;
    request_queue& queue_;
    std::string path_;
    owned_fd socket_;
    transport parent_;
    std::int64_t initialize_seq_ = 0;
    std::atomic<bool> parent_gone_{false};
    std::atomic<bool> terminated_seen_{false};
    std::thread pump_;
};

}  // namespace ompdbg::app::dap
