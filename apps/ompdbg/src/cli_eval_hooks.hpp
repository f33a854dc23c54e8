#pragma once
/// The CLI's side of the model's evaluation hooks: function calls run by its run control
/// (infcall/).

#include "ompdbg/debugger/eval/evaluation_hooks.hpp"

namespace ompdbg::app {

class session;

/// Implements debugger::evaluation_hooks over the CLI session that owns it.
class cli_eval_hooks final : public debugger::evaluation_hooks {
public:
    explicit cli_eval_hooks(session& s) : s_(s) {}

    void require_callable() override;
    dwarf::value call_function(pid_t tid, const dwarf::function_call& call,
                               std::optional<std::uint64_t> stack_top) override;
    std::uint64_t push_scratch(pid_t tid, std::span<const std::byte> bytes,
                               std::optional<std::uint64_t> below) override;

private:
    session& s_;
};

}  // namespace ompdbg::app
