// The model's evaluation hooks over the CLI's run control (cli_eval_hooks.hpp).

#include "cli_eval_hooks.hpp"

#include "infcall/inferior_call.hpp"
#include "session.hpp"

namespace ompdbg::app {

void cli_eval_hooks::require_callable() { infcall::require_callable(s_); }

dwarf::value cli_eval_hooks::call_function(pid_t tid, const dwarf::function_call& call,
                                           std::optional<std::uint64_t> stack_top) {
    return infcall::call_function(s_, tid, call, stack_top);
}

std::uint64_t cli_eval_hooks::push_scratch(pid_t tid, std::span<const std::byte> bytes,
                                           std::optional<std::uint64_t> below) {
    return infcall::push_scratch(s_, tid, bytes, below);
}

}  // namespace ompdbg::app
