#pragma once
/// The protocol's JSON shapes in one place: a request as the handlers see it, responses,
/// events, and the table of handlers (one per request, each in the file of its concern).

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "command_table.hpp"
#include "dap/dap_transport.hpp"

namespace ompdbg::app::dap {

class adapter;

/// One request being handled. A handler answers it with respond() (early, when what it
/// does next produces events that must follow the response, as `continue` does); a
/// handler that returns without answering gets an empty success response; one that throws
/// an error response whose message is the exception's text.
class request {
public:
    request(transport& t, nlohmann::json message);
    const std::string& command() const { return command_; }
    std::int64_t seq() const { return seq_; }
    const nlohmann::json& arguments() const { return arguments_; }
    /// arguments()[key] when it is a string, else `fallback`.
    std::string string_arg(const char* key, std::string fallback = {}) const;
    bool bool_arg(const char* key, bool fallback) const;

    void respond(nlohmann::json body = nlohmann::json::object());
    void fail(const std::string& message);
    bool answered() const { return answered_; }

private:
    transport& t_;
    std::int64_t seq_ = 0;
    std::string command_;
    nlohmann::json arguments_;
    bool answered_ = false;
};

using handler = std::function<void(adapter&, request&)>;
using handler_table = std::map<std::string, handler, std::less<>>;

/// What `initialize` answers: the capabilities docs/dap.md lists.
nlohmann::json server_capabilities();

/// An event message (`body` may be empty).
nlohmann::json make_event(const std::string& name, nlohmann::json body = nlohmann::json::object());

// Registration, one function per concern (dap_*.cpp).
void register_launch_handlers(handler_table& t);        ///< initialize, launch, attach, configurationDone, disconnect, terminate
void register_breakpoint_handlers(handler_table& t);    ///< setBreakpoints, setFunctionBreakpoints, setExceptionBreakpoints
void register_thread_handlers(handler_table& t);        ///< threads
void register_stack_handlers(handler_table& t);         ///< stackTrace, scopes
void register_variable_handlers(handler_table& t);      ///< variables, setVariable
void register_evaluate_handlers(handler_table& t);      ///< evaluate
void register_execution_handlers(handler_table& t);      ///< continue, next, stepIn, stepOut (pause: the server)
void register_memory_handlers(handler_table& t);         ///< disassemble, readMemory
void register_module_handlers(handler_table& t);         ///< modules
/// Adds the session command `dap-log MESSAGE` (a logpoint's message with its {EXPR}
/// evaluated in the selected frame) that logpoints run.
void register_logpoint_command(command_table& t);

/// The items of `list` from `start` on, at most `count` (0: all): a paged request's answer
/// (stackTrace's startFrame/levels, modules' startModule/moduleCount).
nlohmann::json page_of(const nlohmann::json& list, int start, int count);

}  // namespace ompdbg::app::dap
