// continue, next, stepIn, stepOut: answered first, then the target runs (the server's reader
// keeps taking requests: `pause` interrupts it); the stop comes as a `stopped` event.
#include "dap/dap_adapter.hpp"
#include "dap/dap_protocol.hpp"
#include "ompdbg/base/error.hpp"

namespace ompdbg::app::dap {

namespace {

/// Selects the request's thread (when it names one that exists); in a rank session without
/// one, its rank's thread.
void select_thread(adapter& a, const request& r) {
    if (a.model().process() == nullptr) {
        error::send("The program is not being run.");
    }
    if (auto it = r.arguments().find("threadId"); it != r.arguments().end() && it->is_number_integer()) {
        a.select(a.thread_frame(it->get<pid_t>()));
    } else if (a.requester_rank() >= 0) {
        a.select(a.rank_frame(a.requester_rank()));
    }
}

/// Runs `line` after answering; a step that ends without a stop report (it failed: the
/// message goes to the console) still tells the client where the thread is.
void resume(adapter& a, request& r, const std::string& line, nlohmann::json body) {
    a.begin_resume(line);
    r.respond(std::move(body));
    a.tell_resumed();
    command_result res = a.run_resuming(line, stop_hint::step);
    if (!res.ok && !res.error.empty()) {
        a.output(res.error + "\n", "stderr");
    }
    if (!res.stopped && !res.ended && !a.continue_after_requests() && a.model().process() != nullptr &&
        a.model().process()->is_alive()) {
        a.send_event("stopped", {{"reason", "step"}, {"threadId", a.model().selected_tid()}, {"allThreadsStopped", true}});
    }
}

bool by_instruction(const request& r) {
    return r.string_arg("granularity") == "instruction";
}

void cont(adapter& a, request& r) {
    select_thread(a, r);
    resume(a, r, "continue", {{"allThreadsContinued", true}});
}

void next(adapter& a, request& r) {
    select_thread(a, r);
    resume(a, r, by_instruction(r) ? "nexti" : "next", nlohmann::json::object());
}

void step_in(adapter& a, request& r) {
    select_thread(a, r);
    resume(a, r, by_instruction(r) ? "stepi" : "step", nlohmann::json::object());
}

void step_out(adapter& a, request& r) {
    select_thread(a, r);
    resume(a, r, "finish", nlohmann::json::object());
}

/// `pause` while nothing runs (the reader answers it while the target runs): the target is
/// stopped already; say so, as a client waits for a stopped event after pause.
void pause(adapter& a, request& r) {
    a.cancel_continue_after_requests();   // stopped quietly for a breakpoint request: it stays
    r.respond();
    if (a.model().process() != nullptr && a.model().process()->is_alive()) {
        pid_t tid = a.requester_rank() >= 0 ? a.rank_frame(a.requester_rank()).tid : a.model().selected_tid();
        a.send_event("stopped", {{"reason", "pause"}, {"threadId", tid}, {"allThreadsStopped", true}});
    }
}

}  // namespace

void register_execution_handlers(handler_table& t) {
    t["pause"] = pause;
    t["continue"] = cont;
    t["next"] = next;
    t["stepIn"] = step_in;
    t["stepOut"] = step_out;
}

}  // namespace ompdbg::app::dap
