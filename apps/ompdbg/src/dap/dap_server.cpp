#include "dap/dap_server.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "dap/dap_adapter.hpp"
#include "dap/dap_capture.hpp"
#include "dap/dap_protocol.hpp"
#include "dap/dap_queue.hpp"
#include "dap/dap_ranks.hpp"
#include "dap/dap_relay.hpp"
#include "dap/dap_transport.hpp"
#include "run_control.hpp"

namespace ompdbg::app::dap {

namespace {

/// Interrupts the running target as Ctrl-C does (run_control's SIGINT handler).
void interrupt_target() {
    ::kill(::getpid(), SIGINT);
}

/// What a rank session's reader answers itself (dap_ranks.hpp): its `initialize`, `attach`
/// and `configurationDone` (they need no debugger, and the job may be running), and its end
/// (`disconnect`, `terminate`: the job goes on). True when the request was handled; `ended`
/// when the session is over.
bool handle_rank_request(rank_sessions& ranks, rank_connection& c, const nlohmann::json& msg, bool& ended) {
    request r(c.client(), msg);
    const std::string& command = r.command();
    if (command == "initialize") {
        r.respond(server_capabilities());
    } else if (command == "attach") {
        std::string why;
        if (!ranks.bind(c, r.arguments(), why)) {
            r.fail(why);
            return true;
        }
        r.respond();
        c.client().send(make_event("initialized"));
    } else if (command == "disconnect") {
        ranks.closed(c);
        r.respond();
        ended = true;
    } else if (c.rank() < 0) {
        r.fail("'" + command + "' before 'attach' in a rank's session: send 'attach' with the rank first");
    } else if (command == "configurationDone") {
        ranks.configured(c, [&] { r.respond(); });
    } else if (command == "terminate") {
        r.respond();
        ranks.terminate(c);
    } else {
        return false;
    }
    return true;
}

/// A reader thread, the client's (`from` nullptr) or a rank session's: framing errors and
/// messages that are no requests are answered here, `pause` too; the rest goes to the queue.
void read_loop(transport& t, adapter& a, request_queue& q, rank_sessions* ranks = nullptr,
               std::shared_ptr<rank_connection> from = nullptr) {
    t.set_idle([&a] {
        // The interrupt may have come before the wait for the target began (or between two
        // of its background events): repeat it until the stop is reported.
        if ((a.pause_pending() || a.breakpoint_pause_pending()) && a.is_resuming()) {
            interrupt_target();
        }
    });
    for (;;) {
        read_result m = t.read();
        if (std::holds_alternative<std::monostate>(m) && from) {
            ranks->closed(*from);   // a rank session ended (or died): the job goes on
            return;
        }
        if (std::holds_alternative<std::monostate>(m)) {
            // The client is gone: a running target is stopped (repeatedly, until the main
            // thread has the stop) so that the main thread can end it.
            a.request_pause();
            q.push({std::nullopt, nullptr});
            while (a.is_resuming()) {
                interrupt_target();
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
            return;
        }
        if (auto* bad = std::get_if<framing_error>(&m)) {
            t.send(make_event("output", {{"category", "stderr"}, {"output", "ompdbg dap: " + bad->message + "\n"}}));
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
                t.send(make_event("output", {{"category", "stderr"}, {"output", "ompdbg dap: ignored a message that is not a request\n"}}));
            }
            continue;
        }
        std::string command = msg["command"].get<std::string>();
        if (from) {
            bool ended = false;
            if (handle_rank_request(*ranks, *from, msg, ended)) {
                if (ended) {
                    return;
                }
                continue;
            }
        }
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
            r.respond({{"threads", from ? a.rank_threads_snapshot(from->rank()) : a.threads_snapshot()}});
            continue;
        }
        if ((command == "setBreakpoints" || command == "setFunctionBreakpoints") && a.is_resuming() &&
            a.initialized()) {
            // Breakpoints set while the program runs take effect at once: the target is
            // stopped quietly, the request answered, and the target continued.
            q.push({std::move(msg), from});
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
        q.push({std::move(msg), from});
    }
}

void handle(const handler_table& handlers, adapter& a, transport& t, nlohmann::json msg,
            std::shared_ptr<rank_connection> from) {
    struct requester_scope {
        adapter& a;
        ~requester_scope() { a.set_requester(nullptr); }
    } scope{a};
    a.set_requester(from);
    request r(from ? from->client() : t, std::move(msg));
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
        request_queue queue;
        rank_sessions ranks(t);
        adapter a(t);
        a.set_rank_sessions(&ranks);
        ranks.set_serve([&](std::shared_ptr<rank_connection> c) { read_loop(c->client(), a, queue, &ranks, c); });
        std::thread reader([&] { read_loop(t, a, queue); });
        std::optional<nlohmann::json> initialize;   // the client's, for a rank session's parent
        std::unique_ptr<relay> to_parent;           // this server is a rank session's relay
        while (!a.finished()) {
            if (a.continue_after_requests() && queue.empty()) {
                a.continue_quietly();   // every request of the quiet stop is answered
                continue;
            }
            auto item = queue.pop();
            if (!item.message) {
                break;   // the client closed our input without disconnect (or the relay ended)
            }
            nlohmann::json& msg = *item.message;
            if (to_parent) {
                to_parent->forward(msg);
                continue;
            }
            if (!item.from && msg.value("command", std::string()) == "initialize") {
                initialize = msg;
            }
            if (!item.from && initialize && is_rank_attach(msg) && a.target_origin() == adapter::origin::none) {
                try {
                    to_parent = std::make_unique<relay>(t, queue, *initialize, msg);
                } catch (const std::exception& e) {
                    request(t, msg).fail(e.what());
                }
                continue;
            }
            handle(handlers, a, t, std::move(msg), std::move(item.from));
        }
        t.stop();
        reader.join();
        to_parent.reset();
        // No target left stopped or traced: kill what we launched, detach what we attached.
        a.end_target(a.target_origin() != adapter::origin::attached);
        ranks.close();   // every rank session gets `terminated`
    }
    {
        std::lock_guard lock(client_lock);
        client = nullptr;
    }
    return status;
}

}  // namespace ompdbg::app::dap
