#pragma once
/// The requests the reader threads (the client's, and one per rank session) hand to the main
/// thread, which alone drives the debugger session (ptrace wants one tracer thread).

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

namespace ompdbg::app::dap {

class rank_connection;

/// One message for the main thread: a request (nullopt: the client's input ended) and the
/// rank session it came from (nullptr: the client that started the server).
struct queued_request {
    std::optional<nlohmann::json> message;
    std::shared_ptr<rank_connection> from;
};

class request_queue {
public:
    void push(queued_request m) {
        {
            std::lock_guard lock(lock_);
            items_.push_back(std::move(m));
        }
        ready_.notify_one();
    }
    bool empty() {
        std::lock_guard lock(lock_);
        return items_.empty();
    }
    queued_request pop() {
        std::unique_lock lock(lock_);
        ready_.wait(lock, [this] { return !items_.empty(); });
        auto m = std::move(items_.front());
        items_.pop_front();
        return m;
    }

private:
    std::mutex lock_;
    std::condition_variable ready_;
    std::deque<queued_request> items_;
};

}  // namespace ompdbg::app::dap
