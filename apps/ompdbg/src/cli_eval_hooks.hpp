#pragma once
/// The CLI's side of the model's evaluation hooks: a stop that interrupted a call into the
/// program (infcall/inferior_call.hpp) shown as any stop.

#include "ompdbg/debugger/eval/evaluation_hooks.hpp"
#include "ompdbg/debugger/run/stop_decision.hpp"
#include "stop_printer.hpp"

namespace ompdbg::app {

/// Implements debugger::evaluation_hooks over the CLI session that owns it.
class cli_eval_hooks final : public debugger::evaluation_hooks {
public:
    explicit cli_eval_hooks(session& s) : s_(s) {}

    bool show_stop(const debugger::stop_report& r) override { return app::show_stop(s_, r); }

private:
    session& s_;
};

}  // namespace ompdbg::app
