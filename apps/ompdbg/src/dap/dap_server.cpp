#include "dap/dap_server.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "dap/dap_adapter.hpp"
#include "dap/dap_capture.hpp"
#include "dap/dap_protocol.hpp"
#include "dap/dap_transport.hpp"
#include "run_control.hpp"

namespace ompdbg::app::dap {

namespace {

/// Requests handed from the reader thread to the main thread; nullopt: the input ended.
class request_queue {
public:
    void push(std::optional<nlohmann::json> m) {
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
    std::optional<nlohmann::json> pop() {
        std::unique_lock lock(lock_);
        ready_.wait(lock, [this] { return !items_.empty(); });
        auto m = std::move(items_.front());
        items_.pop_front();
        return m;
    }

private:
    std::mutex lock_;
    std::condition_variable ready_;
    std::deque<std::optional<nlohmann::json>> items_;
};

/// Interrupts the running target as Ctrl-C does (run_control's SIGINT handler).
void interrupt_target() {
    ::kill(::getpid(), SIGINT);
}

/// The reader thread: framing errors and messages that are no requests are answered here,
/// `pause` too; the rest goes to the queue.
void read_loop(transport& t, adapter& a, request_queue& q) {
    t.set_idle([&a] {
        // The interrupt may have come before the wait for the target began (or between two
        // of its background events): repeat it until the stop is reported.
        if ((a.pause_pending() || a.breakpoint_pause_pending()) && a.is_resuming()) {
            interrupt_target();
        }
    });
    for (;;) {
        read_result m = t.read();
        if (std::holds_alternative<std::monostate>(m)) {
            // The client is gone: a running target is stopped (repeatedly, until the main
            // thread has the stop) so that the main thread can end it.
            a.request_pause();
            q.push(std::nullopt);
            while (a.is_resuming()) {
                interrupt_target();
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
            return;
        }
        if (auto* bad = std::get_if<framing_error>(&m)) {
            a.output("ompdbg dap: " + bad->message + "\n", "stderr");
            continue;
        }
        auto& msg = std::get<nlohmann::json>(m);
        bool is_request = msg.value("type", std::string()) == "request" && msg.contains("command") &&
                          msg["command"].is_string() && msg.contains("seq") && msg["seq"].is_number_integer();
        if (!is_request) {
            if (msg.contains("seq") && msg["seq"].is_number_integer() && msg.value("type", std::string()) != "response") {
                request r(t, msg);
                r.fail("not a request: a message needs \"type\": \"request\", an integer \"seq\" and a \"command\"");
            } else if (msg.value("type", std::string()) != "response") {
                a.output("ompdbg dap: ignored a message that is not a request\n", "stderr");
            }
            continue;
        }
        std::string command = msg["command"].get<std::string>();
        if (command == "pause" && a.is_resuming()) {
            request r(t, msg);
            a.request_pause();
            interrupt_target();
            r.respond();
            continue;
        }
        if (command == "threads" && a.is_resuming() && a.initialized()) {
            // Clients ask for the threads while the target runs (on `thread` events, when a
            // view opens): the list of the last stop, without waiting for the next one.
            request r(t, msg);
            r.respond({{"threads", a.threads_snapshot()}});
            continue;
        }
        if ((command == "setBreakpoints" || command == "setFunctionBreakpoints") && a.is_resuming() &&
            a.initialized()) {
            // Breakpoints set while the program runs take effect at once: the target is
            // stopped quietly, the request answered, and the target continued.
            q.push(std::move(msg));
            if (a.request_breakpoint_pause()) {
                interrupt_target();
            }
            continue;
        }
        if ((command == "disconnect" || command == "terminate") && a.is_resuming()) {
            // Stop the target first: the main thread is waiting on it.
            a.request_pause();
            interrupt_target();
        }
        q.push(std::move(msg));
    }
}

void handle(const handler_table& handlers, adapter& a, transport& t, nlohmann::json msg) {
    request r(t, std::move(msg));
    if (!a.initialized() && r.command() != "initialize") {
        r.fail("'" + r.command() + "' before 'initialize': send 'initialize' first");
        return;
    }
    auto it = handlers.find(r.command());
    if (it == handlers.end()) {
        r.fail("unknown request '" + r.command() + "'");
        return;
    }
    try {
        it->second(a, r);
        r.respond();
    } catch (const std::exception& e) {
        if (r.answered()) {
            a.output(std::string(e.what()) + "\n", "stderr");
        } else {
            r.fail(e.what());
        }
    }
}

}  // namespace

int run_dap(const std::vector<std::string>& args) {
    if (!args.empty()) {
        std::fprintf(stderr, "usage: ompdbg dap   (a Debug Adapter Protocol server on stdin/stdout)\n");
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);   // a client that went away must not kill the debugger
    transport* client = nullptr;
    std::mutex client_lock;
    // Everything written on descriptors 1 and 2 from now on (the program's output, stray
    // messages) reaches the client as output events, never inside the protocol stream.
    stdio_redirect redirect([&](std::string text) {
        std::lock_guard lock(client_lock);
        if (client != nullptr) {
            client->send(make_event("output", {{"category", "stdout"}, {"output", std::move(text)}}));
        }
    });
    transport t(redirect.protocol_in(), redirect.protocol_out());
    {
        std::lock_guard lock(client_lock);
        client = &t;
    }
    install_interrupt_handler();
    handler_table handlers;
    register_launch_handlers(handlers);
    register_breakpoint_handlers(handlers);
    register_thread_handlers(handlers);
    register_stack_handlers(handlers);
    register_variable_handlers(handlers);
    register_evaluate_handlers(handlers);
    register_execution_handlers(handlers);
    register_memory_handlers(handlers);
    register_module_handlers(handlers);
    int status = 0;
    {
        adapter a(t);
        request_queue queue;
        std::thread reader([&] { read_loop(t, a, queue); });
        while (!a.finished()) {
            if (a.continue_after_requests() && queue.empty()) {
                a.continue_quietly();   // every request of the quiet stop is answered
                continue;
            }
            auto msg = queue.pop();
            if (!msg) {
                break;   // the client closed our input without disconnect
            }
            handle(handlers, a, t, std::move(*msg));
        }
        t.stop();
        reader.join();
        // No target left stopped or traced: kill what we launched, detach what we attached.
        a.end_target(a.target_origin() != adapter::origin::attached);
    }
    {
        std::lock_guard lock(client_lock);
        client = nullptr;
    }
    return status;
}

}  // namespace ompdbg::app::dap
